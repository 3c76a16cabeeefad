/* A pcapng writer: the three blocks a packet trace needs, written as
 * draft-ietf-opsawg-pcapng (the PCAP Next Generation capture file format,
 * IETF OPSAWG draft, version 1.0 of the format) defines them, readable by
 * libpcap 1.10 (pcap_open_offline) and Wireshark/tshark.
 *
 * Why our own and not Debian's libwiretap-dev: libwiretap would write
 * pcapng, but it pulls glib and Wireshark's whole file-format layer into a
 * data plane to emit three fixed layouts; Debian 12's libpcap (1.10) reads
 * pcapng but writes classic pcap only. The blocks are short and fully
 * specified, so they are encoded here, libc only.
 *
 * Blocks (draft-ietf-opsawg-pcapng, section 3.1 "General Block Structure"):
 * type, block total length, body padded to 32 bits, block total length
 * again. Written in host byte order; the section header's byte-order magic
 * tells the reader which (section 4.1). Options (section 3.5) are code,
 * length, value padded to 32 bits, ended by opt_endofopt.
 *
 * Encoders build one block into a caller's buffer and return its length (0
 * when it does not fit); pcapng_file writes them to a stdio stream.
 * Thread-safety: none; one writer per file.
 */
#ifndef SLUICE_BASE_PCAPNG_H
#define SLUICE_BASE_PCAPNG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PCAPNG_BT_SHB 0x0A0D0D0Au /* section 4.1 */
#define PCAPNG_BT_IDB 0x00000001u /* section 4.2 */
#define PCAPNG_BT_EPB 0x00000006u /* section 4.3 */
#define PCAPNG_BYTE_ORDER_MAGIC 0x1A2B3C4Du
#define PCAPNG_LINKTYPE_ETHERNET 1 /* tcpdump.org link-layer header types: LINKTYPE_ETHERNET */
#define PCAPNG_TSRESOL_NS 9        /* if_tsresol: 10^-9 s, nanoseconds (section 4.2) */

/* Longest block the encoders make: an EPB's fixed part, the packet and a
 * comment are the caller's; this bounds the options they add. */
#define PCAPNG_OPTION_MAX 65535

/* Section header block with shb_userappl = appl (NULL: none), section length
 * unknown (-1). */
size_t pcapng_shb(uint8_t *buf, size_t cap, const char *appl);

/* Interface description block: linktype, snaplen, if_name = name,
 * if_description = desc (NULL: none), if_tsresol = tsresol. */
size_t pcapng_idb(uint8_t *buf, size_t cap, uint16_t linktype, uint32_t snaplen, const char *name,
		  const char *desc, uint8_t tsresol);

/* Enhanced packet block on interface if_id at ts (in the interface's
 * if_tsresol units): caplen bytes of data, original length len, and
 * opt_comment = comment (NULL: none). */
size_t pcapng_epb(uint8_t *buf, size_t cap, uint32_t if_id, uint64_t ts, const void *data, uint32_t caplen,
		  uint32_t len, const char *comment);

/* A file being written: interfaces are numbered in the order added. */
struct pcapng_file {
	FILE *f;
	uint8_t *buf; /* one block */
	size_t cap;
	uint32_t n_interfaces;
	uint64_t n_packets;
	int err; /* first errno seen, 0: none */
};

/* Start a section on f (taken: pcapng_close closes it); buf_size bounds one
 * block (packet + comment + 64 is enough). 0 or a negative errno. */
int pcapng_open(struct pcapng_file *p, FILE *f, size_t buf_size, const char *appl);

/* Add an interface (IDB, tsresol nanoseconds); returns its id or a
 * negative errno. */
int pcapng_add_interface(struct pcapng_file *p, const char *name, const char *desc, uint32_t snaplen);

/* Write one packet (EPB) with its time in nanoseconds. 0 or a negative
 * errno (-EMSGSIZE: larger than the buffer, nothing written). */
int pcapng_write_packet(struct pcapng_file *p, uint32_t if_id, uint64_t ts_ns, const void *data, uint32_t caplen,
			uint32_t len, const char *comment);

/* Flush and close; 0 or the first error met while writing. */
int pcapng_close(struct pcapng_file *p);

#endif
