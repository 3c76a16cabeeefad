/* Aliases: VPP's names for sluice's commands (CLI_ALIAS in cli/cli.h).
 * An alias is a registered command without a function of its own; the
 * dispatcher translates its words here and runs the target's function, so
 * the alias and the target can never drift apart. docs/vpp-cli.md lists
 * them with VPP's commands.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli_private.h"

/* The longest path that is registered among the first n words of w, as
 * the number of words it has; 0 when none is. */
static int longest_registered(char *const *w, int n, const struct cli_command_reg **reg)
{
	char path[CLI_LINE_MAX + 1];
	for (int k = n; k > 0; k--) {
		size_t len = 0;
		for (int i = 0; i < k && len < sizeof(path); i++)
			len += (size_t)snprintf(path + len, sizeof(path) - len, "%s%s", i ? " " : "", w[i]);
		if (len >= sizeof(path))
			continue;
		*reg = cli_registry_find(path);
		if (*reg && !(*reg)->alias)
			return k;
	}
	return 0;
}

/* Split s in place at spaces into w (at most max words); returns the count. */
static int split_words(char *s, char **w, int max)
{
	int n = 0;
	char *save = NULL;
	for (char *t = strtok_r(s, " ", &save); t && n < max; t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	return n;
}

/* What the word becomes: itself, a mapping's right side, or NULL (dropped). */
static char *map_word(char *word, char *const *pairs, int n_pairs)
{
	for (int i = 0; i < n_pairs; i++) {
		const char *eq = strchr(pairs[i], '=');
		size_t klen = eq ? (size_t)(eq - pairs[i]) : strlen(pairs[i]);
		if (strlen(word) == klen && !strncmp(word, pairs[i], klen))
			return eq && eq[1] ? (char *)eq + 1 : NULL;
	}
	return word;
}

int cli_alias_translate(const struct cli_alias *a, int argc, char *const *argv,
			const struct cli_command_reg **target, int *argc_out, char ***argv_out)
{
	size_t tlen = strlen(a->target), wlen = a->words ? strlen(a->words) : 0;
	int max_t = (int)tlen / 2 + 1, max_p = (int)wlen / 2 + 1;
	/* The target's words, the pairs, then the result: the target's words
	 * again at most, the alias's and a NULL. */
	int max = max_t + max_p + max_t + argc + 1;
	char **v = malloc((size_t)max * sizeof(*v) + tlen + 1 + wlen + 1);
	if (!v)
		return -ENOMEM;
	char *tcopy = (char *)(v + max), *wcopy = tcopy + tlen + 1;
	memcpy(tcopy, a->target, tlen + 1);
	memcpy(wcopy, a->words ? a->words : "", wlen + 1);
	/* The result starts after the words and pairs it still reads. */
	char **tw = v, **pairs = v + max_t;
	int nt = split_words(tcopy, tw, max_t);
	int np = split_words(wcopy, pairs, max_p);
	int k = longest_registered(tw, nt, target);
	if (!k) {
		free(v);
		return -ENOENT;
	}
	char **out = v + max_t + max_p;
	int n = 0;
	for (int i = k; i < nt; i++)
		out[n++] = tw[i];
	for (int i = 0; i < argc; i++) {
		char *w = map_word(argv[i], pairs, np);
		if (w)
			out[n++] = w;
	}
	out[n] = NULL;
	/* The caller frees v: the result moves to its front. */
	memmove(v, out, (size_t)(n + 1) * sizeof(*v));
	*argc_out = n;
	*argv_out = v;
	return 0;
}
