/* Big-endian field access for on-disk structures (all Tux3 integers are
 * big-endian; log records use byte-aligned 48-bit fields). */
#ifndef TUX3_ENDIAN_H
#define TUX3_ENDIAN_H

#include <stdint.h>

static inline uint16_t be16(const uint8_t *p)
{
	return (uint16_t)((p[0] << 8) | p[1]);
}

static inline uint32_t be32(const uint8_t *p)
{
	return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
	       ((uint32_t)p[2] << 8) | p[3];
}

static inline uint64_t be48(const uint8_t *p)
{
	return ((uint64_t)be16(p) << 32) | be32(p + 2);
}

static inline uint64_t be64(const uint8_t *p)
{
	return ((uint64_t)be32(p) << 32) | be32(p + 4);
}

static inline void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put_be32(uint8_t *p, uint32_t v)
{
	put_be16(p, (uint16_t)(v >> 16));
	put_be16(p + 2, (uint16_t)v);
}

static inline void put_be48(uint8_t *p, uint64_t v)
{
	put_be16(p, (uint16_t)(v >> 32));
	put_be32(p + 2, (uint32_t)v);
}

static inline void put_be64(uint8_t *p, uint64_t v)
{
	put_be32(p, (uint32_t)(v >> 32));
	put_be32(p + 4, (uint32_t)v);
}

#endif
