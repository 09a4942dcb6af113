"""rclpy (real ROS 2, test_msgs) side of the text conformance suite
(crates/roslite-cli/tests/conformance_text.rs): what rclpy prints for every test_msgs message
and service, with the fixtures test_msgs ships plus edge values.

    repr_conformance.py cases
        prints one JSON object a line:
        {"kind": "msg", "type": "test_msgs/msg/Arrays", "case": "fixture 0", "yaml": ...,
         "repr": repr(msg), "refused": null or the field roslite must refuse to send}
        {"kind": "srv", "type": "test_msgs/srv/BasicTypes", "case": ..., "yaml": request,
         "request_repr": repr(request), "response_repr": repr(response as a client receives it)}
        `yaml` is flow YAML that both `yaml.safe_load` and roslite read as the message (checked
        here: the message set from it equals the case). `refused` names a bounded string rclpy
        would send (its bound counted in characters) but roslite refuses to (in bytes).
    repr_conformance.py serve <seconds>
        serves /conformance/<Name> for every test_msgs service, answering each case's request
        with its response; prints READY.
    repr_conformance.py talk <seconds>
        publishes on /conformance/strings (test_msgs/msg/Strings) and /conformance/wstrings
        (test_msgs/msg/WStrings) the non-ASCII texts of `TEXT_CASES` every 100 ms; prints READY.
"""
import array
import json
import math
import os
import sys
import time

# rclpy checks each value a field is given (type, range, bound counted in characters) only when
# asked; every case here must be one rclpy accepts.
os.environ["ROS_PYTHON_CHECK_FIELDS"] = "1"

import numpy
import rclpy
from rclpy.serialization import deserialize_message, serialize_message
from test_msgs import message_fixtures, service_fixtures
from test_msgs import msg as test_msg
from test_msgs import srv as test_srv

# Message types roslite reads from .msg files; the keyed ones exist only as .idl.
MESSAGES = [
    "Arrays", "BasicTypes", "BoundedPlainSequences", "BoundedSequences", "Builtins",
    "Constants", "Defaults", "Empty", "MultiNested", "Nested", "Strings",
    "UnboundedSequences", "WStrings",
]
SERVICES = ["Arrays", "BasicTypes", "Empty"]

# Texts Python's repr escapes or that take more than a byte: quotes, backslash, controls,
# non-ASCII, a character outside the Basic Multilingual Plane, unprintable ones.
ODD_TEXTS = [
    "it's", 'say "hi"', "both ' and \"", "back\\slash", "tab\tnew\nline\r", "\x01\x7f",
    "Hellö Wörld!", "ハローワールド", "😀 outside the BMP", "nbsp\u00a0zwsp\u200b", "\u2028",
    "\U000e0001",
]


def edge_messages():
    """(name, message) pairs beyond the fixtures."""
    out = []
    floats32 = [0.1, -0.0, math.inf, -math.inf, math.nan, 1e-45, 3.4e38, -1.5, 1e-05, 1e16]
    for i, x in enumerate(floats32):
        m = test_msg.BasicTypes()
        m.float32_value = x
        m.float64_value = [5e-324, -0.0, 1.7976931348623157e308, math.nan, math.inf, 0.1,
                           -math.inf, 2.2250738585072014e-308, 1e-05, 1e16][i]
        m.char_value = [65, 39, 34, 92, 0, 10, 127, 128, 255, 1][i]
        m.byte_value = bytes([[65, 39, 34, 92, 0, 10, 127, 128, 255, 1][i]])
        out.append((f"edge floats {i}", m))
    for i, text in enumerate(ODD_TEXTS):
        m = test_msg.Strings()
        m.string_value = text
        m.bounded_string_value = text
        out.append((f"edge text {i}", m))
        w = test_msg.WStrings()
        w.wstring_value = text
        w.array_of_wstrings = [text, "", text[::-1]]
        w.unbounded_sequence_of_wstrings = [text] * 3
        out.append((f"edge text {i}", w))
    # rclpy sends these (its bound counts characters); roslite refuses to (it counts bytes).
    m = test_msg.Strings()
    m.bounded_string_value = "ö" * 22
    out.append(("edge 22 umlauts in string<=22", m))
    m = test_msg.BoundedSequences()
    m.string_values = ["😀" * 3]
    out.append(("edge non-BMP in a bounded sequence", m))
    a = test_msg.Arrays()
    a.float32_values = [math.nan, math.inf, -0.0]
    a.float64_values = [5e-324, 1e300, -1e-300]
    a.int8_values = [-128, 127, 0]
    a.uint64_values = [18446744073709551615, 1, 2]
    a.char_values = [ord("a"), 0, 255]
    out.append(("edge arrays non-finite", a))
    a = test_msg.Arrays()
    a.float32_values = [1e-45, 3.4e38, 1.0]
    a.float64_values = [0.001953125, 1.0, 9.999999999]
    out.append(("edge arrays magnitudes", a))
    a = test_msg.Arrays()
    a.float32_values = [0.1, 0.2, 0.3]
    a.float64_values = [0.1, 0.2, 0.30000000000000004]
    out.append(("edge arrays decimals", a))
    s = test_msg.UnboundedSequences()
    s.float32_values = [0.1, math.nan, -0.0, 1e-45, math.inf]
    s.float64_values = [0.1, 5e-324, -math.inf]
    s.char_values = [0, 65, 255]
    s.byte_values = [b"'", b'"', b"\\"]
    s.string_values = ODD_TEXTS
    out.append(("edge sequences", s))
    s = test_msg.BoundedPlainSequences()
    s.float32_values = [0.1] * 3
    s.int64_values = [-9223372036854775808, 0, 9223372036854775807]
    s.char_values = [255, 0, 65]
    out.append(("edge bounded sequences full", s))
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
    import yaml  # noqa: F401  (imported where used: only `cases` needs it)
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
    """Message equality that takes NaN as equal to NaN."""
    return yaml_message(a) == yaml_message(b)


def check_yaml(cls, msg):
    import yaml
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


def message_cases():
    for name in MESSAGES:
        cls = getattr(test_msg, name)
        fixtures = [(f"fixture {i}", m) for i, m in enumerate(message_fixtures.get_test_msg(name))]
        edges = [(label, m) for label, m in edge_messages() if type(m) is cls]
        for label, msg in fixtures + edges:
            yield {
                "kind": "msg", "type": f"test_msgs/msg/{name}", "case": label,
                "yaml": check_yaml(cls, msg), "repr": repr(msg),
                "refused": over_byte_bound(msg),
            }


def service_pairs():
    """(name, label, request, response) for every test_msgs service case."""
    for name in SERVICES:
        for i, (request, response) in enumerate(service_fixtures.get_test_srv(name)):
            yield name, f"fixture {i}", request, response
    for i, (label, m) in enumerate(
            (label, m) for label, m in edge_messages() if type(m) is test_msg.BasicTypes):
        request = test_srv.BasicTypes.Request()
        response = test_srv.BasicTypes.Response()
        for field in m.get_fields_and_field_types():
            setattr(request, field, getattr(m, field))
            setattr(response, field, getattr(m, field))
        request.string_value = ODD_TEXTS[i % len(ODD_TEXTS)]
        response.string_value = ODD_TEXTS[(i + 1) % len(ODD_TEXTS)]
        # The key the server answers by: no two cases share it.
        request.int64_value = response.int64_value = 1000 + i
        yield "BasicTypes", label, request, response


def received(msg):
    """The message as a client receives it: float32 values widened on the way."""
    return deserialize_message(serialize_message(msg), type(msg))


def service_cases():
    for name, label, request, response in service_pairs():
        cls = getattr(test_srv, name)
        yield {
            "kind": "srv", "type": f"test_srv/srv/{name}".replace("test_srv", "test_msgs"),
            "case": label, "yaml": check_yaml(cls.Request, request),
            "request_repr": repr(request), "response_repr": repr(received(response)),
        }


def key(request):
    return getattr(request, "int64_value", 0)


def serve(seconds):
    node = rclpy.create_node("repr_conformance_server")
    answers = {}
    for name, _, request, response in service_pairs():
        answers[(name, key(request))] = response

    def make(name):
        def answer(request, response):
            return answers[(name, key(request))]
        return answer

    services = [node.create_service(getattr(test_srv, n), f"/conformance/{n}", make(n))
                for n in SERVICES]
    print("READY", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        rclpy.spin_once(node, timeout_sec=0.1)
    del services


# What `talk` publishes: rclpy counts bounds in characters, so these go out.
TEXT_CASES = {
    "strings": dict(string_value="😀" * 3, bounded_string_value="ö" * 22),
    "wstrings": dict(wstring_value="😀ハロー", array_of_wstrings=["😀", "ö", "三"],
                     bounded_sequence_of_wstrings=["😀😀"]),
}


def talk(seconds):
    node = rclpy.create_node("repr_conformance_talker")
    strings = node.create_publisher(test_msg.Strings, "/conformance/strings", 10)
    wstrings = node.create_publisher(test_msg.WStrings, "/conformance/wstrings", 10)
    print("READY", flush=True)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        strings.publish(test_msg.Strings(**TEXT_CASES["strings"]))
        wstrings.publish(test_msg.WStrings(**TEXT_CASES["wstrings"]))
        rclpy.spin_once(node, timeout_sec=0.1)


def main():
    mode = sys.argv[1]
    if mode == "cases":
        for case in list(message_cases()) + list(service_cases()):
            print(json.dumps(case, ensure_ascii=False))
        return
    rclpy.init()
    try:
        {"serve": serve, "talk": talk}[mode](float(sys.argv[2]))
    finally:
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
