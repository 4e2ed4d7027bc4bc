"""CRC32C (Castagnoli), as common/io/crc32c.c computes it: chained, so
that crc32c(crc32c(0, a), b) == crc32c(0, a + b)."""


def crc32c(data, crc=0):
    crc ^= 0xffffffff
    for b in data:
        crc ^= b
        for _ in range(8):
            crc = (crc >> 1) ^ (0x82f63b78 if crc & 1 else 0)
    return crc ^ 0xffffffff
