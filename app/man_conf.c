/* sluice-man-conf: write startup.conf(5) in roff from the key tables the
 * parser uses (app_sections, app_interface_keys, the driver registry), so
 * the manual cannot drift from the parser. Run at build time by
 * app/meson.build; tests/app/test_man_conf.c reads the page back against
 * the same tables.
 *
 *   sluice-man-conf SYSCONFDIR > startup.conf.5
 *
 * Layout the test relies on: one `.SS` line per table (a section's plain
 * keys, its blocks' keys, the keys every interface takes, each driver's),
 * then per key `.TP`, `.B NAME` (with \fI...\fP for the value), the doc
 * line, and `Default:` followed by the default in \fB...\fP or `none`.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/conf.h"
#include "app/conf_private.h"
#include "sluice_version.h"

/* Text for a roff text line: backslashes and hyphens escaped; a leading
 * . or ' would read as a request. */
static void roff_text(FILE *f, const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", f);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", f);
		else if (*s == '-')
			fputs("\\-", f);
		else
			fputc(*s, f);
	}
}

/* The value a key takes, as a placeholder word (enums list their choices). */
static void value_word(FILE *f, const struct conf_key *k)
{
	static const char *const words[] = {
		[CONF_FLAG] = "",	  [CONF_BOOL] = "on|off",	[CONF_UINT] = "N",
		[CONF_SIZE] = "SIZE",	  [CONF_RATE] = "RATE",		[CONF_PPS] = "PPS",
		[CONF_DURATION] = "TIME", [CONF_MODE] = "MODE",		[CONF_STRING] = "STRING",
		[CONF_ENUM] = "",	  [CONF_CPULIST] = "CPULIST",	[CONF_ADDR] = "ADDRESS",
		[CONF_MAC] = "MAC",	  [CONF_IP4] = "IPV4",		[CONF_CUSTOM] = "VALUE",
	};
	if (k->type == CONF_FLAG)
		return;
	fputs(" \\fI", f);
	if (k->type == CONF_ENUM)
		for (const char *const *c = k->choices; *c; c++) {
			fputs(c == k->choices ? "" : "|", f);
			roff_text(f, *c);
		}
	else
		fputs(words[k->type], f);
	fputs("\\fP", f);
}

/* The default as the parser leaves it: the key's own default, else (keys
 * of a block with an init function, such as a generator stream's) what
 * init put in a fresh element, else none. */
static void default_text(const struct conf_key *k, const struct conf_block *b, char *buf, size_t len)
{
	snprintf(buf, len, "%s", k->def ? k->def : "");
	if (k->def || !b || !b->init)
		return;
	void *elem = calloc(1, b->elem_size);
	if (!elem)
		return;
	b->init(elem);
	conf_value_format(k, elem, buf, len);
	free(elem);
	if (k->type == CONF_FLAG && !buf[0])
		snprintf(buf, len, "not set");
	if (strcmp(buf, "\"\"") == 0)
		buf[0] = 0;
}

static void print_key(FILE *f, const struct conf_key *k, const struct conf_block *b)
{
	char def[1024];
	fputs(".TP\n.B ", f);
	roff_text(f, k->name);
	value_word(f, k);
	fputc('\n', f);
	roff_text(f, k->doc ? k->doc : k->type == CONF_FLAG ? "a bare word, no value" : "(no description)");
	fputs(".\n.br\nDefault: ", f);
	default_text(k, b, def, sizeof(def));
	if (def[0]) {
		fputs("\\fB", f);
		roff_text(f, def);
		fputs("\\fP", f);
	} else {
		fputs("none", f);
	}
	if (k->max && (k->type == CONF_UINT || k->type == CONF_SIZE || k->type == CONF_DURATION))
		fprintf(f, "; range %llu..%llu%s", (unsigned long long)k->min, (unsigned long long)k->max,
			k->type == CONF_SIZE ? " bytes" : k->type == CONF_DURATION ? " ns" : "");
	fputs(".\n", f);
}

static void print_table(FILE *f, const char *title, const char *doc, const struct conf_key *keys,
			const struct conf_block *b)
{
	fputs(".SS \"", f);
	roff_text(f, title);
	fputs("\"\n", f);
	if (doc) {
		roff_text(f, doc);
		fputs(".\n", f);
	}
	for (const struct conf_key *k = keys; k && k->name; k++)
		print_key(f, k, b);
}

static int by_name(const void *a, const void *b)
{
	return strcmp((*(const struct conf_driver *const *)a)->name, (*(const struct conf_driver *const *)b)->name);
}

/* Every interface takes app_interface_keys; `driver` picks the rest. */
static void print_interfaces(FILE *f)
{
	const struct conf_driver *d[64];
	uint32_t n = conf_driver_count();
	if (n > ARRAY_LEN(d))
		n = ARRAY_LEN(d);
	for (uint32_t i = 0; i < n; i++)
		d[i] = conf_driver_get(i);
	qsort(d, n, sizeof(d[0]), by_name); /* constructor order is link order */
	print_table(f, "interfaces NAME { }",
		    "keys of every interface block, whatever its driver; `driver NAME` comes first", app_interface_keys,
		    NULL);
	for (uint32_t i = 0; i < n; i++) {
		char title[128];
		snprintf(title, sizeof(title), "interfaces NAME { driver %s }", d[i]->name);
		print_table(f, title, d[i]->doc, d[i]->keys, NULL);
	}
}

static const char header[] =
	".SH NAME\n"
	"startup.conf \\- sluice startup configuration\n"
	".SH SYNOPSIS\n"
	".B sluice \\-c %s/sluice/startup.conf\n"
	".SH DESCRIPTION\n"
	"sluice reads one configuration file at start.\n"
	"It is made of sections, each a name followed by a block in braces holding\n"
	".I key value\n"
	"words, and in some sections named blocks\n"
	".RI ( NAME\n"
	"{ keys }).\n"
	"Line breaks carry no meaning;\n"
	".B #\n"
	"and\n"
	".B //\n"
	"start comments at the beginning of a word; values with spaces are quoted,\n"
	"with \\e\" and \\e\\e inside quotes.\n"
	"Every key has a default, and an empty file gives the built-in defaults.\n"
	".PP\n"
	"Sizes take K, M and G (1024-based); rates bit, kbit, mbit and gbit\n"
	"(bits per second, 1000-based); packet rates pps, kpps and mpps; durations\n"
	"ns, us, ms, s, m and h.\n"
	"Modes are octal.\n"
	"A bad file is refused with its name, line, column and what was expected;\n"
	".B sluice \\-\\-check\n"
	"prints the effective configuration, every key with its value.\n"
	".SH SECTIONS\n"
	"Every section and key sluice knows, in the order\n"
	".B \\-\\-check\n"
	"prints them.\n";

static const char footer[] =
	".SH FILES\n"
	".TP\n"
	".I %s/sluice/startup.conf\n"
	"the configuration the systemd unit starts sluice with.\n"
	".SH SEE ALSO\n"
	".BR sluice (8),\n"
	".BR sluicectl (8),\n"
	".BR sluice\\-stats (8)\n";

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: sluice-man-conf SYSCONFDIR > startup.conf.5\n");
		return 2;
	}
	FILE *f = stdout;
	fprintf(f, ".\\\" Generated by sluice-man-conf from the parser's key tables: do not edit.\n");
	fprintf(f, ".TH STARTUP.CONF 5 \"\" \"sluice %s\" \"File Formats\"\n", SLUICE_VERSION);
	fprintf(f, header, argv[1]);
	for (size_t i = 0; i < app_n_sections; i++) {
		const struct conf_section *s = app_sections[i].sec;
		print_table(f, s->name, s->doc, s->keys, NULL);
		if (app_sections[i].interfaces) {
			print_interfaces(f);
		} else if (s->block) {
			char title[128];
			snprintf(title, sizeof(title), "%s NAME { }", s->name);
			char doc[128];
			snprintf(doc, sizeof(doc), "keys of each %s block", s->block->what);
			print_table(f, title, doc, s->block->keys, s->block);
		}
	}
	fprintf(f, footer, argv[1]);
	return fflush(f) == 0 && !ferror(f) ? 0 : 1;
}
