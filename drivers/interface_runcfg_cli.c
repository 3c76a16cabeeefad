/* The interface layer's part of the running configuration
 * (cli/cli_runcfg.h): interfaces made by `create interface`, and what is
 * set on every interface (MTU, MAC, rx burst, rx modes, L2 cross-connect
 * or L3, admin state).
 *
 * A device does not keep the words it was made with, so `create interface`
 * hands them here (dev_runcfg_created). An interface made otherwise
 * (startup.conf, linux-cp's TAPs) has no create line: one of startup.conf
 * is an object without a line, so only its deletion is ever written; a
 * linux-cp TAP is linux-cp's to write (`lcp create`) and is left out, what
 * is set on it included (it follows its port).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cli_runcfg.h"
#include "drivers/device.h"
#include "drivers/drivers_cli.h"

#define KEY_SIZE (DEV_NAME_SIZE + 32)

/* What `create interface` made: its words, valid while the same device
 * (pointer and name) holds the index. */
static struct {
	const struct device *dev;
	char name[DEV_NAME_SIZE];
	char *words; /* "driver null rx-queues 2" */
} created[DEV_MAX];

/* A word as a CLI line must carry it to read back as one word: quoted
 * when it holds a blank or a quote, or is empty (libcli splits lines at
 * blanks and takes "..." or '...' whole); one holding both quotes cannot
 * be written and is left as it is. */
static const char *word_quote(const char *w)
{
	if (*w && !strpbrk(w, " \t\"'"))
		return "";
	return strchr(w, '"') ? "'" : "\"";
}

void dev_runcfg_created(const struct device *d, const char *driver, const char *const *words, uint32_t n)
{
	if (d->index >= DEV_MAX)
		return;
	size_t len = strlen("driver ") + strlen(driver) + 1;
	for (uint32_t i = 0; i < n; i++)
		len += strlen(words[i]) + 3;
	char *w = malloc(len);
	if (!w)
		return; /* written as made by startup.conf: only its deletion shows */
	int k = snprintf(w, len, "driver %s", driver);
	for (uint32_t i = 0; i < n; i++) {
		const char *q = word_quote(words[i]);
		k += snprintf(w + k, len - (size_t)k, " %s%s%s", q, words[i], q);
	}
	free(created[d->index].words);
	created[d->index].dev = d;
	snprintf(created[d->index].name, sizeof(created[d->index].name), "%s", d->name);
	created[d->index].words = w;
}

static const char *created_words(const struct device *d)
{
	if (d->index >= DEV_MAX || created[d->index].dev != d || strcmp(created[d->index].name, d->name))
		return NULL;
	return created[d->index].words;
}

/* linux-cp's TAPs are linux-cp's (nodes/lcp writes `lcp create`). */
static bool is_lcp_tap(const struct device *d)
{
	return d->mode == DEV_MODE_LCP;
}

static void write_interfaces(struct cli_runcfg *rc, struct cli_session *s)
{
	(void)s;
	struct device *d;
	DEV_FOREACH(d)
	{
		if (is_lcp_tap(d))
			continue;
		char key[KEY_SIZE], undo[KEY_SIZE + 32];
		snprintf(key, sizeof(key), "if %s", d->name);
		snprintf(undo, sizeof(undo), "delete interface %s", d->name);
		const char *words = created_words(d);
		if (words)
			cli_runcfg_object(rc, key, undo, "create interface %s %s", d->name, words);
		else
			cli_runcfg_object(rc, key, undo, NULL);
	}
}

CLI_RUNCFG_WRITER(interfaces_runcfg, "interfaces", CLI_RUNCFG_INTERFACES, write_interfaces)

static void write_rx_modes(struct cli_runcfg *rc, const struct device *d)
{
	char key[KEY_SIZE];
	for (uint16_t q = 0; q < d->n_rx_queues; q++) {
		uint8_t m = d->rxq[q].rx_mode;
		snprintf(key, sizeof(key), "if %s rx-mode %u", d->name, q);
		cli_runcfg_attr(rc, key, m == DEV_RX_MODE_DEFAULT, "set interface rx-mode %s queue %u %s", d->name, q,
				dev_rx_mode_name(m == DEV_RX_MODE_DEFAULT ? dev_rx_mode(d, q) : (enum dev_rx_mode)m));
	}
}

/* An interface's mode: L3 (the default) or cross-connected to its peer. */
static void write_mode(struct cli_runcfg *rc, const struct device *d)
{
	char key[KEY_SIZE];
	snprintf(key, sizeof(key), "if %s mode", d->name);
	const struct device *peer = dev_by_index(d->xconnect_peer);
	if (d->mode == DEV_MODE_L2_XCONNECT && peer)
		cli_runcfg_attr(rc, key, false, "set interface l2 xconnect %s %s", d->name, peer->name);
	else
		cli_runcfg_attr(rc, key, true, "set interface l3 %s", d->name);
}

static void write_interface_settings(struct cli_runcfg *rc, struct cli_session *s)
{
	(void)s;
	struct device *d;
	char key[KEY_SIZE], mac[18];
	DEV_FOREACH(d)
	{
		if (is_lcp_tap(d))
			continue;
		snprintf(key, sizeof(key), "if %s mtu", d->name);
		cli_runcfg_attr(rc, key, d->mtu == DEV_MTU_DEFAULT, "set interface mtu %u %s", d->mtu, d->name);
		/* Never a default: a MAC made at creation is random, so a replay
		 * sets the one this interface has. */
		snprintf(key, sizeof(key), "if %s mac", d->name);
		cli_runcfg_attr(rc, key, false, "set interface mac address %s %s", d->name, dev_format_mac(mac, d->mac));
		snprintf(key, sizeof(key), "if %s rx-burst", d->name);
		cli_runcfg_attr(rc, key, d->rx_burst == DEV_RX_BURST_MAX, "set interface rx-burst %s %u", d->name,
				d->rx_burst);
		write_rx_modes(rc, d);
		write_mode(rc, d);
	}
	/* Admin state last: an interface comes up with its settings in place. */
	DEV_FOREACH(d)
	{
		if (is_lcp_tap(d))
			continue;
		snprintf(key, sizeof(key), "if %s state", d->name);
		cli_runcfg_attr(rc, key, !d->admin_up, "set interface state %s %s", d->name, d->admin_up ? "up" : "down");
	}
}

CLI_RUNCFG_WRITER(interface_settings_runcfg, "interface settings", CLI_RUNCFG_INTERFACE_SET,
		  write_interface_settings)
