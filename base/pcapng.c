/* pcapng blocks (see pcapng.h), as draft-ietf-opsawg-pcapng lays them out. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/pcapng.h"

#define PCAPNG_OPT_ENDOFOPT 0 /* section 3.5 */
#define PCAPNG_OPT_COMMENT 1
#define PCAPNG_SHB_USERAPPL 4 /* section 4.1 */
#define PCAPNG_IF_NAME 2      /* section 4.2 */
#define PCAPNG_IF_DESCRIPTION 3
#define PCAPNG_IF_TSRESOL 9

static size_t pad32(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

/* A block being built: out of room once, out of room for good. */
struct blk {
	uint8_t *p;
	size_t cap, len;
	int full;
};

static void put(struct blk *b, const void *v, size_t n)
{
	if (b->full || n > b->cap - b->len) {
		b->full = 1;
		return;
	}
	memcpy(b->p + b->len, v, n);
	b->len += n;
}

static void put32(struct blk *b, uint32_t v)
{
	put(b, &v, 4);
}

static void put16(struct blk *b, uint16_t v)
{
	put(b, &v, 2);
}

static void put_zeros(struct blk *b, size_t n)
{
	static const uint8_t z[4];
	put(b, z, n);
}

/* One option (section 3.5): code, length, value, zeros to 32 bits. */
static void put_opt(struct blk *b, uint16_t code, const void *v, size_t n)
{
	if (n > PCAPNG_OPTION_MAX) {
		b->full = 1;
		return;
	}
	put16(b, code);
	put16(b, (uint16_t)n);
	put(b, v, n);
	put_zeros(b, pad32(n) - n);
}

static void put_opt_str(struct blk *b, uint16_t code, const char *s)
{
	if (s)
		put_opt(b, code, s, strlen(s));
}

/* Type and a length patched in by blk_end (section 3.1). */
static void blk_begin(struct blk *b, uint8_t *buf, size_t cap, uint32_t type)
{
	*b = (struct blk){ .p = buf, .cap = cap };
	put32(b, type);
	put32(b, 0);
}

/* Options end with opt_endofopt; the total length closes the block and is
 * written at both ends, so a reader can walk backwards too (section 3.1). */
static size_t blk_end(struct blk *b, int has_opts)
{
	if (has_opts)
		put32(b, PCAPNG_OPT_ENDOFOPT);
	uint32_t total = (uint32_t)b->len + 4;
	put32(b, total);
	if (b->full)
		return 0;
	memcpy(b->p + 4, &total, 4);
	return total;
}

size_t pcapng_shb(uint8_t *buf, size_t cap, const char *appl)
{
	struct blk b;
	blk_begin(&b, buf, cap, PCAPNG_BT_SHB);
	put32(&b, PCAPNG_BYTE_ORDER_MAGIC);
	put16(&b, 1); /* major */
	put16(&b, 0); /* minor */
	uint64_t unknown = UINT64_MAX; /* section length not given (-1) */
	put(&b, &unknown, 8);
	put_opt_str(&b, PCAPNG_SHB_USERAPPL, appl);
	return blk_end(&b, appl != NULL);
}

size_t pcapng_idb(uint8_t *buf, size_t cap, uint16_t linktype, uint32_t snaplen, const char *name,
		  const char *desc, uint8_t tsresol)
{
	struct blk b;
	blk_begin(&b, buf, cap, PCAPNG_BT_IDB);
	put16(&b, linktype);
	put16(&b, 0); /* reserved */
	put32(&b, snaplen);
	put_opt_str(&b, PCAPNG_IF_NAME, name);
	put_opt_str(&b, PCAPNG_IF_DESCRIPTION, desc);
	put_opt(&b, PCAPNG_IF_TSRESOL, &tsresol, 1);
	return blk_end(&b, 1);
}

size_t pcapng_epb(uint8_t *buf, size_t cap, uint32_t if_id, uint64_t ts, const void *data, uint32_t caplen,
		  uint32_t len, const char *comment)
{
	struct blk b;
	blk_begin(&b, buf, cap, PCAPNG_BT_EPB);
	put32(&b, if_id);
	put32(&b, (uint32_t)(ts >> 32)); /* timestamp, upper 32 bits first (section 4.3) */
	put32(&b, (uint32_t)ts);
	put32(&b, caplen);
	put32(&b, len);
	put(&b, data, caplen);
	put_zeros(&b, pad32(caplen) - caplen);
	put_opt_str(&b, PCAPNG_OPT_COMMENT, comment);
	return blk_end(&b, comment != NULL);
}

static int file_put(struct pcapng_file *p, size_t n)
{
	if (!n)
		return -EMSGSIZE;
	if (fwrite(p->buf, 1, n, p->f) != n && !p->err)
		p->err = errno ? errno : EIO;
	return p->err ? -p->err : 0;
}

int pcapng_open(struct pcapng_file *p, FILE *f, size_t buf_size, const char *appl)
{
	*p = (struct pcapng_file){ .f = f, .cap = buf_size, .buf = malloc(buf_size) };
	if (!p->buf)
		return -ENOMEM;
	return file_put(p, pcapng_shb(p->buf, p->cap, appl));
}

int pcapng_add_interface(struct pcapng_file *p, const char *name, const char *desc, uint32_t snaplen)
{
	int rc = file_put(p, pcapng_idb(p->buf, p->cap, PCAPNG_LINKTYPE_ETHERNET, snaplen, name, desc,
					PCAPNG_TSRESOL_NS));
	return rc ? rc : (int)p->n_interfaces++;
}

int pcapng_write_packet(struct pcapng_file *p, uint32_t if_id, uint64_t ts_ns, const void *data, uint32_t caplen,
			uint32_t len, const char *comment)
{
	int rc = file_put(p, pcapng_epb(p->buf, p->cap, if_id, ts_ns, data, caplen, len, comment));
	if (!rc)
		p->n_packets++;
	return rc;
}

int pcapng_close(struct pcapng_file *p)
{
	if (p->f && fclose(p->f) && !p->err)
		p->err = errno ? errno : EIO;
	p->f = NULL;
	free(p->buf);
	p->buf = NULL;
	return -p->err;
}
