/* Node templates (graph/node.h): one registered node per instance a
 * provider names, made when the registry is read. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "graph/graph_private.h"

#define TEMPLATE_MAX 16

static struct {
	const struct node_template *t;
	uint32_t n_expanded; /* instances 0..n_expanded-1 have their node */
} templates[TEMPLATE_MAX];
static uint32_t n_templates;
static pthread_mutex_t expand_lock = PTHREAD_MUTEX_INITIALIZER;

void node_template_register(const struct node_template *t)
{
	/* Constructors run before main: nowhere to report an overflow but stderr. */
	if (n_templates == TEMPLATE_MAX) {
		fprintf(stderr, "sluice: graph: node template table full, '%s' ignored\n", t->reg.name);
		return;
	}
	templates[n_templates++].t = t;
}

/* The node of one instance: a copy of the template's registration under
 * its own name, kept for the life of the process like the static ones. */
static void instantiate(const struct node_template *t, const char *name, const void *context)
{
	size_t len = strlen(name) + strlen(t->suffix) + 1;
	struct node_reg *reg = malloc(sizeof(*reg) + len);
	if (!reg) {
		base_log("graph", "out of memory for node '%s%s'", name, t->suffix);
		return;
	}
	*reg = t->reg;
	char *n = (char *)(reg + 1);
	snprintf(n, len, "%s%s", name, t->suffix);
	reg->name = n;
	reg->context = context;
	if (node_registry_lookup(n)) {
		base_log("graph", "node '%s' exists, template '%s' skips it", n, t->reg.name);
		free(reg);
		return;
	}
	node_registry_add(reg);
}

void node_templates_expand(void)
{
	pthread_mutex_lock(&expand_lock);
	for (uint32_t k = 0; k < n_templates; k++) {
		const char *name;
		const void *context;
		while (templates[k].t->instance(templates[k].n_expanded, &name, &context)) {
			instantiate(templates[k].t, name, context);
			templates[k].n_expanded++;
		}
	}
	pthread_mutex_unlock(&expand_lock);
}
