"""The aggregation packet's header, for the scripted peers of the tests
(agg_peer.py, reorder_node.py): one definition of what uapi/linux/netagg.h
says, big-endian header, little-endian payload.
"""
import struct

# version flags dtype reserved jid vid tid count contributors round session
HDR = struct.Struct("!BBBBIIHHHHI")
assert HDR.size == 24, "the header is 24 bytes (uapi/linux/netagg.h)"

VERSION = 2  # NETAGG_PROTO_VERSION
PORT = 7177  # NETAGG_UDP_PORT
DSCP = 56  # NETAGG_DSCP
PROBE_VIDS = 64  # NETAGG_PROBE_VIDS: VIDs one probe asks about

# NETAGG_F_*
F_RESULT, F_FIN, F_RETRY, F_REGROUPED = 0x01, 0x02, 0x04, 0x08
F_PROBE, F_LATE, F_MEAN, F_WHOLE = 0x10, 0x20, 0x40, 0x80

# NETAGG_DTYPE_*, by the names the peers take
DTYPES = {"f32": 1, "i32": 2, "f16": 3, "bf16": 4}
DTYPE_SIZES = {1: 4, 2: 4, 3: 2, 4: 2}  # bytes per element, by NETAGG_DTYPE_*


# Tags (uapi/linux/netagg.h, "Tags"): a keyed job's packets end in one.
TAG_LEN = 8  # NETAGG_TAG_LEN
KEY_LEN = 32  # NETAGG_KEY_LEN


def poly1305_hash(r_key: bytes, msg: bytes) -> bytes:
    """RFC 8439's Poly1305 with the pad 0: the polynomial alone, mod 2^128."""
    r = int.from_bytes(r_key[:16], "little") & 0x0ffffffc0ffffffc0ffffffc0fffffff
    p = (1 << 130) - 5
    h = 0
    for i in range(0, len(msg), 16):
        block = msg[i:i + 16] + b"\x01"
        h = (h + int.from_bytes(block, "little")) * r % p
    return (h % (1 << 128)).to_bytes(16, "little")


def siphash24(key: bytes, msg: bytes) -> int:
    """SipHash-2-4 of msg with a 16-byte key, as the kernel's siphash()."""
    mask = (1 << 64) - 1

    def rotl(x: int, b: int) -> int:
        return ((x << b) | (x >> (64 - b))) & mask

    k0, k1 = int.from_bytes(key[:8], "little"), int.from_bytes(key[8:16], "little")
    v = [k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d,
         k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573]

    def rounds(n: int) -> None:
        for _ in range(n):
            v[0] = (v[0] + v[1]) & mask; v[1] = rotl(v[1], 13); v[1] ^= v[0]
            v[0] = rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & mask; v[3] = rotl(v[3], 16); v[3] ^= v[2]
            v[0] = (v[0] + v[3]) & mask; v[3] = rotl(v[3], 21); v[3] ^= v[0]
            v[2] = (v[2] + v[1]) & mask; v[1] = rotl(v[1], 17); v[1] ^= v[2]
            v[2] = rotl(v[2], 32)

    tail = len(msg) % 8
    for i in range(0, len(msg) - tail, 8):
        m = int.from_bytes(msg[i:i + 8], "little")
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    m = int.from_bytes(msg[len(msg) - tail:], "little") | (len(msg) & 0xff) << 56
    v[3] ^= m
    rounds(2)
    v[0] ^= m
    v[2] ^= 0xff
    rounds(4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def tag(key: bytes, packet: bytes, sender: bytes = b"") -> bytes:
    """The tag of packet (header and payload) under a job's key: sender is
    the 16-byte address (IPv4-mapped) and 2-byte port a contribution or sum
    is bound to, b"" for a result."""
    return siphash24(key[16:], poly1305_hash(key[:16], packet + sender)).to_bytes(8, "little")


def read_key(path: str) -> bytes:
    """A key file as netagg job add reads it: 32 bytes, or 64 hex digits."""
    raw = open(path, "rb").read()
    return raw if len(raw) == KEY_LEN else bytes.fromhex(raw.decode().strip())


def sender(addr: str, port: int) -> bytes:
    """A sender's address and port as a tag binds them."""
    import ipaddress
    ip = ipaddress.ip_address(addr)
    raw = ip.packed if ip.version == 6 else b"\0" * 10 + b"\xff\xff" + ip.packed
    return raw + port.to_bytes(2, "big")
