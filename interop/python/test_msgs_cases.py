"""The cases of roslite's ROS 2 conformance suites, as real rclpy (test_msgs) makes them: every
test_msgs message and service with the fixtures test_msgs ships plus edge values, and what
rclpy and the ros2 tools make of each (repr, echo text, serialized bytes).

Shared by the rclpy sides of the text suite (`repr_conformance.py`,
crates/roslite-cli/tests/conformance_text.rs) and of the wire suite (`conformance_peer.py`,
crates/roslite-cli/tests/conformance.rs). Both list the cases with `print_cases()`, one JSON
object a line, in the same order; a case's number is its line (from 0):

    {"kind": "msg", "type": "test_msgs/msg/Arrays", "case": "fixture 0", "yaml": ...,
     "repr": repr(msg), "echo": what `ros2 topic echo --full-length` prints of it,
     "echo_truncated": what `ros2 topic echo` prints (strings and arrays cut at 128),
     "cdr": serialize_message(msg) as hex, "refused": null or the field roslite refuses to send}
    {"kind": "srv", "type": "test_msgs/srv/BasicTypes", "case": ..., "yaml": request,
     "request_repr": repr(request), "response_repr": repr(response as a client receives it),
     "request_cdr": ..., "response_cdr": ..., "response_yaml": ...}

`yaml` is flow YAML that both `yaml.safe_load` and roslite read as the message (checked here:
the message set from it equals the case). `refused` names a bounded string rclpy would send
(its bound counted in characters) but roslite refuses to (in bytes).
"""
import array
import functools
import json
import math
import pathlib
import sys
from collections import OrderedDict

import numpy
import rosidl_parser.definition as idl
import yaml
from rosidl_parser.parser import parse_idl_file
from rclpy.serialization import deserialize_message, serialize_message
from test_msgs import message_fixtures, service_fixtures
from test_msgs import msg as test_msg
from test_msgs import srv as test_srv

# Every test_msgs message type: the keyed ones (test_msgs defines them in .idl only; roslite
# ships their Rust types) last.
MESSAGES = [
    "Arrays", "BasicTypes", "BoundedPlainSequences", "BoundedSequences", "Builtins",
    "Constants", "Defaults", "Empty", "MultiNested", "Nested", "Strings",
    "UnboundedSequences", "WStrings",
    "KeyedLong", "KeyedString", "NonKeyedWithNestedKey", "ComplexNestedKey",
]
SERVICES = ["Arrays", "BasicTypes", "Empty"]

# Texts Python's repr escapes or that take more than a byte: quotes, backslash, controls,
# non-ASCII, a character outside the Basic Multilingual Plane, unprintable ones.
ODD_TEXTS = [
    "it's", 'say "hi"', "both ' and \"", "back\\slash", "tab\tnew\nline\r", "\x01\x7f",
    "Hellö Wörld!", "ハローワールド", "😀 outside the BMP", "nbsp\u00a0zwsp\u200b", "\u2028",
    "\U000e0001",
]
# Long text of one-, two-, three- and four-byte characters (10,000 characters).
LONG_TEXT = "aö三😀" * 2500

INTEGER_TYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64"]


def integer_limits(keyword):
    bits = int("".join(c for c in keyword if c.isdigit()))
    if keyword.startswith("u"):
        return 0, 2 ** bits - 1
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


# float32 values as a user types them: the last ones have more digits than a float32 keeps,
# which rclpy keeps in a float32 field until it sends the message.
FLOAT32_EDGES = [0.1, -0.0, math.inf, -math.inf, math.nan, 1e-45, 3.4e38, -1.5, 1e-05, 1e16,
                 1.401298464324817e-45, 1.1754943508222875e-38, 3.4028234e38, 0.123456789,
                 0.10000000149011612]
FLOAT64_EDGES = [5e-324, -0.0, 1.7976931348623157e308, math.nan, math.inf, 0.1, -math.inf,
                 2.2250738585072014e-308, 1e-05, 1e16, -1.7976931348623157e308, 4.9e-324,
                 1e-310, 0.30000000000000004, 123456789.123456789]
BYTE_EDGES = [65, 39, 34, 92, 0, 10, 127, 128, 255, 1, 13, 9, 200, 32, 126]


def checked(cls, **fields):
    """A message whose every field value is checked as rclpy checks it when asked
    (ROS_PYTHON_CHECK_FIELDS=1: type, range, bound counted in characters), so every case is one
    rclpy accepts. Only the cases are built so: an rclpy that checks fields cannot receive a
    float32 of the largest magnitude (the widened value is above the limit its check uses)."""
    return cls(check_fields=True, **fields)


def edge_messages():
    """(name, message) pairs beyond the fixtures."""
    out = []
    for i, x in enumerate(FLOAT32_EDGES):
        m = checked(test_msg.BasicTypes)
        m.float32_value = x
        m.float64_value = FLOAT64_EDGES[i]
        m.char_value = BYTE_EDGES[i]
        m.byte_value = bytes([BYTE_EDGES[i]])
        out.append((f"edge floats {i}", m))
    for end in (0, 1):
        m = checked(test_msg.BasicTypes)
        m.bool_value = bool(end)
        for keyword in INTEGER_TYPES:
            setattr(m, f"{keyword}_value", integer_limits(keyword)[end])
        m.byte_value = bytes([255 * end])
        m.char_value = 255 * end
        m.float32_value = [-3.4028234e38, 3.4028234e38][end]
        m.float64_value = [-1.7976931348623157e308, 1.7976931348623157e308][end]
        out.append((f"edge integer {['minima', 'maxima'][end]}", m))
    for i, text in enumerate(ODD_TEXTS):
        m = checked(test_msg.Strings)
        m.string_value = text
        m.bounded_string_value = text
        out.append((f"edge text {i}", m))
        w = checked(test_msg.WStrings)
        w.wstring_value = text
        w.array_of_wstrings = [text, "", text[::-1]]
        w.unbounded_sequence_of_wstrings = [text] * 3
        out.append((f"edge text {i}", w))
    m = checked(test_msg.Strings)
    m.string_value = LONG_TEXT
    m.string_value_default1 = ""
    m.bounded_string_value = "x" * 22
    m.bounded_string_value_default1 = ""
    out.append(("edge long, empty and full strings", m))
    w = checked(test_msg.WStrings)
    w.wstring_value = LONG_TEXT
    w.wstring_value_default1 = ""
    w.array_of_wstrings = ["😀" * 100, "", "ö"]
    w.bounded_sequence_of_wstrings = ["", "😀", "三"]
    w.unbounded_sequence_of_wstrings = [LONG_TEXT[:97]] * 200
    out.append(("edge long, empty and full wstrings", w))
    # rclpy sends these (its bound counts characters); roslite refuses to (it counts bytes).
    m = checked(test_msg.Strings)
    m.bounded_string_value = "ö" * 22
    out.append(("edge 22 umlauts in string<=22", m))
    m = checked(test_msg.BoundedSequences)
    m.string_values = ["😀" * 3]
    out.append(("edge non-BMP in a bounded sequence", m))
    a = checked(test_msg.Arrays)
    a.float32_values = [math.nan, math.inf, -0.0]
    a.float64_values = [5e-324, 1e300, -1e-300]
    a.int8_values = [-128, 127, 0]
    a.uint64_values = [18446744073709551615, 1, 2]
    a.char_values = [ord("a"), 0, 255]
    out.append(("edge arrays non-finite", a))
    a = checked(test_msg.Arrays)
    a.float32_values = [1e-45, 3.4e38, 1.0]
    a.float64_values = [0.001953125, 1.0, 9.999999999]
    out.append(("edge arrays magnitudes", a))
    a = checked(test_msg.Arrays)
    a.float32_values = [0.1, 0.2, 0.3]
    a.float64_values = [0.1, 0.2, 0.30000000000000004]
    out.append(("edge arrays decimals", a))
    a = checked(test_msg.Arrays)
    for keyword in INTEGER_TYPES:
        low, high = integer_limits(keyword)
        setattr(a, f"{keyword}_values", [low, high, low])
    a.string_values = ["", LONG_TEXT[:1000], "😀"]
    out.append(("edge arrays integer limits", a))
    s = checked(test_msg.UnboundedSequences)
    s.float32_values = [0.1, math.nan, -0.0, 1e-45, math.inf]
    s.float64_values = [0.1, 5e-324, -math.inf]
    s.char_values = [0, 65, 255]
    s.byte_values = [b"'", b'"', b"\\"]
    s.string_values = ODD_TEXTS
    out.append(("edge sequences", s))
    s = checked(test_msg.UnboundedSequences)
    for keyword in INTEGER_TYPES:
        low, high = integer_limits(keyword)
        setattr(s, f"{keyword}_values", [low, high])
    s.string_values = [""]
    out.append(("edge sequences integer limits", s))
    s = checked(test_msg.UnboundedSequences)
    s.bool_values = [i % 3 == 0 for i in range(1000)]
    s.byte_values = [bytes([i % 256]) for i in range(3000)]
    s.char_values = [i % 256 for i in range(300)]
    s.float32_values = [i * 0.25 for i in range(2000)]
    s.float64_values = [i * 0.1 for i in range(1000)]
    s.int32_values = list(range(-2500, 2500))
    s.uint8_values = [i % 256 for i in range(3000)]
    s.uint64_values = [2 ** 64 - 1 - i for i in range(500)]
    s.string_values = ODD_TEXTS * 10
    s.basic_types_values = [checked(test_msg.BasicTypes, int64_value=-i) for i in range(50)]
    out.append(("edge long sequences", s))
    s = checked(test_msg.BoundedPlainSequences)
    s.float32_values = [0.1] * 3
    s.int64_values = [-9223372036854775808, 0, 9223372036854775807]
    s.char_values = [255, 0, 65]
    out.append(("edge bounded sequences full", s))
    s = checked(test_msg.BoundedPlainSequences)
    for name in s.get_fields_and_field_types():
        if name != "alignment_check":
            setattr(s, name, [])
    s.alignment_check = -1
    out.append(("edge bounded sequences empty", s))
    s = checked(test_msg.BoundedSequences)
    s.string_values = ["", "x" * 200, "ö"]
    s.bool_values = [True, False, True]
    s.byte_values = [b"\x00", b"\xff", b"\x7f"]
    s.float64_values = [math.nan, -0.0, 5e-324]
    s.basic_types_values = [checked(test_msg.BasicTypes, uint64_value=2 ** 64 - 1)] * 3
    s.defaults_values = [checked(test_msg.Defaults)] * 3
    s.constants_values = [checked(test_msg.Constants)] * 3
    out.append(("edge bounded sequences full", s))
    return out + keyed_edge_messages()


# Keys around the 16 bytes a key hash holds as it is: a string key of 11 characters serializes
# to 16 bytes (length, text, NUL) and goes out plain, one of 12 needs its MD5 (docs/
# ros2-interop.md §8); and keys of every kind of text.
KEY_TEXTS = ["", "k" * 11, "k" * 12, LONG_TEXT[:1000], "Hellö Wörld!", "😀 outside the BMP",
             "tab\tnew\nline\r", "\x01\x7f"]


def keyed_edge_messages():
    """(name, message) pairs of the keyed types beyond the fixtures: integer limits, keys
    repeated (two samples of one instance), string keys short, at and over 16 serialized bytes,
    long and non-ASCII, and a keyed type nested in a keyless one and in a key."""
    out = []
    low, high = integer_limits("int32")
    for label, key, value in [("minimum key", low, high), ("maximum key", high, low),
                              ("zero", 0, 0), ("key of fixture 0 again", 1, -1)]:
        out.append((f"edge {label}", checked(test_msg.KeyedLong, key=key, value=value)))
    for i, key in enumerate(KEY_TEXTS):
        value = KEY_TEXTS[(i + 3) % len(KEY_TEXTS)]
        out.append((f"edge key {i}", checked(test_msg.KeyedString, key=key, value=value)))
    out.append(("edge key of fixture 0 again",
                checked(test_msg.KeyedString, key="key_1", value=LONG_TEXT)))
    for i, (key, some_int) in enumerate(
            [("", low), (LONG_TEXT[:100], high), ("ハローワールド", 0)]):
        nested = checked(test_msg.KeyedString, key=key, value=ODD_TEXTS[i])
        out.append((f"edge nested key {i}",
                    checked(test_msg.NonKeyedWithNestedKey, nested_data=nested,
                            some_int=some_int)))
    for i, x in enumerate([math.nan, -0.0, math.inf, -math.inf, 5e-324,
                           1.7976931348623157e308]):
        key = KEY_TEXTS[i % len(KEY_TEXTS)]
        nested = checked(test_msg.NonKeyedWithNestedKey,
                         nested_data=checked(test_msg.KeyedString, key=key, value=key[::-1]),
                         some_int=[low, high][i % 2])
        out.append((f"edge complex key {i}",
                    checked(test_msg.ComplexNestedKey, uint32_key=[0, 2 ** 32 - 1][i % 2],
                            nested_keys=nested, float64_value=x)))
    return out


def is_message(value):
    return hasattr(value, "get_fields_and_field_types")


def yaml_float(x):
    if math.isnan(x):
        return ".nan"
    if math.isinf(x):
        return ".inf" if x > 0 else "-.inf"
    text = repr(x)
    # PyYAML's YAML 1.1 float needs a point before an exponent: 1e-05 is 1.0e-05.
    if "e" in text and "." not in text.split("e")[0]:
        mantissa, exponent = text.split("e")
        text = f"{mantissa}.0e{exponent}"
    return text


def yaml_text(s):
    out = '"'
    for c in s:
        if c in '"\\':
            out += "\\" + c
        elif c.isprintable() and c not in "\u0085\u2028\u2029":
            out += c
        elif ord(c) < 0x10000:
            out += f"\\u{ord(c):04x}"
        else:
            out += f"\\U{ord(c):08x}"
    return out + '"'


def yaml_value(value):
    if is_message(value):
        return yaml_message(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (bytes, bytearray)):
        return str(value[0])
    if isinstance(value, (int, numpy.integer)):
        return str(int(value))
    if isinstance(value, (float, numpy.floating)):
        return yaml_float(float(value))
    if isinstance(value, str):
        return yaml_text(value)
    if isinstance(value, (list, tuple, array.array, numpy.ndarray)):
        return "[" + ", ".join(yaml_value(v) for v in value) + "]"
    raise TypeError(f"no YAML for {type(value)}")


def yaml_message(msg):
    fields = msg.get_fields_and_field_types()
    return "{" + ", ".join(f"{name}: {yaml_value(getattr(msg, name))}" for name in fields) + "}"


def loaded(cls, value):
    """The message `value` (from yaml.safe_load) describes, set field by field."""
    msg = cls()
    for name, field_value in (value or {}).items():
        current = getattr(msg, name)
        slot = msg.get_fields_and_field_types()[name]
        if is_message(current):
            setattr(msg, name, loaded(type(current), field_value))
        elif isinstance(current, (list, numpy.ndarray, array.array)) and field_value and \
                is_message_slot(msg, name):
            item_cls = element_class(msg, name)
            setattr(msg, name, [loaded(item_cls, v) for v in field_value])
        elif "octet" in slot:
            if isinstance(field_value, list):
                setattr(msg, name, [bytes([b]) for b in field_value])
            else:
                setattr(msg, name, bytes([field_value]))
        else:
            setattr(msg, name, field_value)
    return msg


def is_message_slot(msg, name):
    return "/" in msg.get_fields_and_field_types()[name]


def element_class(msg, name):
    slot = msg.get_fields_and_field_types()[name]
    inner = slot.split("<")[-1].split("[")[0].rstrip(">").split(",")[0]
    package, name = inner.split("/")
    module = __import__(f"{package}.msg", fromlist=[name])
    return getattr(module, name)


def same(a, b):
    """Message equality that takes NaN as equal to NaN (and tells -0.0 from 0.0)."""
    return yaml_message(a) == yaml_message(b)


def check_yaml(cls, msg):
    text = yaml_message(msg)
    back = loaded(cls, yaml.safe_load(text))
    if not same(back, msg):
        raise SystemExit(f"internal: the YAML of a {cls.__name__} case does not read back")
    return text


def over_byte_bound(msg):
    """The first bounded string (by UTF-8 bytes) rclpy accepts but roslite refuses to send."""
    for name, slot in msg.get_fields_and_field_types().items():
        value = getattr(msg, name)
        if slot.startswith("string<") or slot.startswith("sequence<string<"):
            bound = int(slot.split("string<")[1].split(">")[0])
            texts = [value] if isinstance(value, str) else list(value)
            for text in texts:
                if len(text.encode()) > bound:
                    return name
    return None


def received(msg):
    """The message as a subscriber or client receives it: float32 values widened on the way."""
    return deserialize_message(serialize_message(msg), type(msg))


# What `ros2 topic echo` prints: rosidl_runtime_py's `message_to_yaml`, i.e. PyYAML's
# `yaml.dump` (allow_unicode, unlimited width, block style) of the message turned into an
# ordered mapping of plain Python values. rosidl_runtime_py is not on PyPI, so the conversion
# is written out here, following its documented rules: bytes become text of one character per
# byte, numpy scalars Python numbers, arrays lists, nested messages mappings in field order;
# with a truncate length, longer strings keep that many characters and end in `...`, longer
# arrays keep that many elements and get a last element `...`.

def _plain(value, cut):
    if isinstance(value, bytes):
        value = "".join(chr(b) for b in value)
    if isinstance(value, str):
        return value if cut is None or len(value) <= cut else value[:cut] + "..."
    if isinstance(value, (list, tuple, array.array, numpy.ndarray)):
        items = [_plain(v, cut) for v in value[:cut]] if cut is not None else \
            [_plain(v, cut) for v in value]
        return items + ["..."] if cut is not None and len(value) > cut else items
    if isinstance(value, numpy.number):
        return value.item()
    if isinstance(value, (bool, float, int)):
        return value
    return OrderedDict((name, _plain(getattr(value, name), cut))
                       for name in value.get_fields_and_field_types())


class _EchoDumper(yaml.Dumper):
    """PyYAML's default dumper, with mappings kept in field order (no flow style chosen)."""


_EchoDumper.add_representer(
    OrderedDict,
    lambda dumper, data: yaml.nodes.MappingNode(
        "tag:yaml.org,2002:map",
        [(dumper.represent_data(k), dumper.represent_data(v)) for k, v in data.items()]))

# `ros2 topic echo`'s default `--truncate-length`.
ECHO_TRUNCATE_LENGTH = 128


def echo_text(msg, truncate_length=None):
    """`ros2 topic echo`'s text of a received message, up to its `---` line (with
    `--full-length` when `truncate_length` is None)."""
    return yaml.dump(_plain(msg, truncate_length), Dumper=_EchoDumper, allow_unicode=True,
                     width=sys.maxsize, default_flow_style=False)


# Serialized bytes, compared without what their padding holds: Fast CDR leaves padding bytes
# as the buffer had them, and rclpy's serialize_message returns bytes past the end of the
# message too. `canonical` walks the bytes with the type (plain CDR, XCDR1) and returns the
# message's bytes with every padding byte zeroed, or raises ValueError where they do not fit
# the type.

_PRIMITIVE_SIZES = {
    "boolean": 1, "octet": 1, "char": 1, "uint8": 1, "int8": 1, "int16": 2, "uint16": 2,
    "int32": 4, "uint32": 4, "float": 4, "int64": 8, "uint64": 8, "double": 8,
}


class _Walker:
    def __init__(self, data):
        self.data = bytearray(data)
        self.at = 4  # after the encapsulation header; alignment counts from here

    def align(self, n):
        while (self.at - 4) % n:
            self.take(1)
            self.data[self.at - 1] = 0

    def take(self, n):
        if self.at + n > len(self.data):
            raise ValueError(f"the bytes end at {len(self.data)}, the type needs {self.at + n}")
        self.at += n
        return bytes(self.data[self.at - n:self.at])

    def count(self):
        self.align(4)
        return int.from_bytes(self.take(4), "little")

    def walk(self, ty):
        if isinstance(ty, idl.BasicType):
            size = _PRIMITIVE_SIZES[ty.typename]
            self.align(size)
            self.take(size)
        elif isinstance(ty, idl.AbstractString):
            n = self.count()
            if n == 0 or self.take(n)[-1] != 0:
                raise ValueError(f"a string at {self.at - n} does not end in NUL")
        elif isinstance(ty, idl.AbstractWString):
            self.take(4 * self.count())
        elif isinstance(ty, idl.Array):
            for _ in range(ty.size):
                self.walk(ty.value_type)
        elif isinstance(ty, idl.AbstractSequence):
            n = self.count()
            if n > len(self.data):
                raise ValueError(f"a sequence of {n} elements in {len(self.data)} bytes")
            for _ in range(n):
                self.walk(ty.value_type)
        elif isinstance(ty, idl.NamespacedType):
            module = __import__(".".join(ty.namespaces), fromlist=[ty.name])
            self.walk_struct(getattr(module, ty.name))
        else:
            raise ValueError(f"no CDR walk for {ty}")

    def walk_struct(self, cls):
        if not cls.SLOT_TYPES:
            self.take(1)  # a struct without fields is one dummy byte
        for ty in cls.SLOT_TYPES:
            self.walk(ty)


def canonical(cls, data):
    walker = _Walker(data)
    if len(walker.data) < 4 or walker.data[:4] != b"\x00\x01\x00\x00":
        raise ValueError(f"encapsulation {bytes(walker.data[:4]).hex()}, not CDR_LE 00010000")
    walker.walk_struct(cls)
    return bytes(walker.data[:walker.at])


def compare_bytes(cls, expected, got):
    """None when `got` is the message `expected` holds (padding aside, and at most the
    padding to a multiple of 4 after it), else what differs."""
    want = canonical(cls, expected)
    try:
        have = canonical(cls, got)
    except ValueError as e:
        return f"the bytes do not fit the type: {e}; got {bytes(got).hex()}"
    if len(got) - len(have) > 3:
        return f"{len(got) - len(have)} bytes after the message; got {bytes(got).hex()}"
    if have != want:
        at = next((i for i, (a, b) in enumerate(zip(want, have)) if a != b),
                  min(len(want), len(have)))
        return (f"bytes differ at {at}: expected {want[at:at + 24].hex()}.., "
                f"got {have[at:at + 24].hex()}.. ({len(have)} vs {len(want)} bytes)")
    return None


def compare_values(expected, got):
    """None when the messages hold the same values (NaN equal to NaN), else both in YAML."""
    if same(expected, got):
        return None
    want, have = yaml_message(expected), yaml_message(got)
    at = next((i for i, (a, b) in enumerate(zip(want, have)) if a != b),
              min(len(want), len(have)))
    return f"values differ at {at}: expected `{want[max(0, at - 40):at + 60]}`, " \
           f"got `{have[max(0, at - 40):at + 60]}`"


# A keyed topic's samples are kept per instance (per key): a DDS reader keeps their order
# within an instance only, and Fast DDS's take hands a reader's samples over instance by
# instance (in the order of their key hashes). What comes back is matched to a case by its key.

@functools.lru_cache(maxsize=None)
def key_members(cls):
    """The members of `cls` marked `@key` in the .idl rosidl installed for it (empty for a
    keyless type), read with rosidl's own parser."""
    package = cls.__module__.split(".")[0]
    share = pathlib.Path(sys.prefix) / "share"
    parsed = parse_idl_file(idl.IdlLocator(share, f"{package}/msg/{cls.__name__}.idl"))
    (message,) = parsed.content.get_elements_of_type(idl.Message)
    return tuple(m.name for m in message.structure.members if m.has_annotation("key"))


def _key_of(value, members):
    """The key of `value` in rosidl's key mode: the key members of a struct that has some, every
    member of one that has none."""
    if is_message(value):
        names = members or tuple(value.get_fields_and_field_types())
        return tuple(_key_of(getattr(value, n), key_members(type(getattr(value, n)))
                             if is_message(getattr(value, n)) else ()) for n in names)
    if isinstance(value, (list, tuple, array.array, numpy.ndarray)):
        return tuple(_key_of(v, key_members(type(v)) if is_message(v) else ()) for v in value)
    return yaml_value(value)  # hashable, and NaN equal to NaN


def instance_key(msg):
    """The instance `msg` is a sample of, or None for a keyless type."""
    members = key_members(type(msg))
    return _key_of(msg, members) if members else None


def message_cases():
    """(type name, label, message class, message) of every message case, in order."""
    for name in MESSAGES:
        cls = getattr(test_msg, name)
        fixtures = [(f"fixture {i}", m) for i, m in enumerate(message_fixtures.get_test_msg(name))]
        edges = [(label, m) for label, m in edge_messages() if type(m) is cls]
        for label, msg in fixtures + edges:
            yield f"test_msgs/msg/{name}", label, cls, msg


def service_pairs():
    """(name, label, request, response) for every test_msgs service case."""
    for name in SERVICES:
        for i, (request, response) in enumerate(service_fixtures.get_test_srv(name)):
            yield name, f"fixture {i}", request, response
    for i, (label, m) in enumerate(
            (label, m) for label, m in edge_messages() if type(m) is test_msg.BasicTypes):
        request = checked(test_srv.BasicTypes.Request)
        response = checked(test_srv.BasicTypes.Response)
        for field in m.get_fields_and_field_types():
            setattr(request, field, getattr(m, field))
            setattr(response, field, getattr(m, field))
        request.string_value = ODD_TEXTS[i % len(ODD_TEXTS)]
        response.string_value = ODD_TEXTS[(i + 1) % len(ODD_TEXTS)]
        # The key a server can answer by: no two cases share it.
        request.int64_value = response.int64_value = 1000 + i
        yield "BasicTypes", label, request, response


def service_cases():
    """(type name, label, service class, request, response) of every service case, in order."""
    for name, label, request, response in service_pairs():
        yield f"test_msgs/srv/{name}", label, getattr(test_srv, name), request, response


def all_cases():
    """Every case as the JSON object `print_cases` prints, with its objects under "_"."""
    out = []
    for ty, label, cls, msg in message_cases():
        out.append({
            "kind": "msg", "type": ty, "case": label, "yaml": check_yaml(cls, msg),
            "repr": repr(msg), "echo": echo_text(received(msg)),
            "echo_truncated": echo_text(received(msg), ECHO_TRUNCATE_LENGTH),
            "cdr": serialize_message(msg).hex(), "refused": over_byte_bound(msg),
            "_": (cls, msg),
        })
    for ty, label, cls, request, response in service_cases():
        out.append({
            "kind": "srv", "type": ty, "case": label,
            "yaml": check_yaml(cls.Request, request),
            "response_yaml": check_yaml(cls.Response, response),
            "request_repr": repr(request), "response_repr": repr(received(response)),
            "request_cdr": serialize_message(request).hex(),
            "response_cdr": serialize_message(response).hex(),
            "_": (cls, request, response),
        })
    return out


def print_cases():
    for case in all_cases():
        print(json.dumps({k: v for k, v in case.items() if k != "_"}, ensure_ascii=False))
