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
