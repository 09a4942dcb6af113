"""Builds rt-net's raspimouse_msgs (Leds, LightSensors, Switches) for rclpy into a Python
environment that has ROS 2 from PyPI (ros-rclpy & co.), since PyPI has no raspimouse_msgs.

It does what `rosidl_generate_interfaces` does in a colcon build, with the generators that the
ros-rosidl-* wheels already put in the environment and the system C/C++ compiler:
  1. writes the three interfaces as IDL (rt-net/raspimouse2 raspimouse_msgs/msg/*.msg; primitive
     fields only, so the .msg -> .idl translation is written here instead of needing catkin_pkg),
  2. runs rosidl generators c, py and typesupports c, fastrtps_c, introspection_c
     (through rosidl_cli's Python API),
  3. compiles the five shared libraries and the Python extension with gcc/g++,
  4. installs them like the ros-*-msgs wheels do: libraries into <prefix>/lib (which the wheels'
     bootstrapper puts on LD_LIBRARY_PATH), the Python package into site-packages, the
     interface files into <prefix>/share/raspimouse_msgs.
Then checks that the RIHS01 type hashes match roslite's generated ones.

Usage: <venv>/bin/python build_raspimouse_msgs.py [--prefix DIR]   (default: sys.prefix)
Idempotent: rebuilds only when the installed typesupport cannot be imported.
"""

import argparse
import glob
import json
import os
import pathlib
import shutil
import subprocess
import sys
import sysconfig
import tempfile

PACKAGE = 'raspimouse_msgs'
# rt-net/raspimouse2 raspimouse_msgs/msg (Apache-2.0), field for field.
MESSAGES = {
    'Leds': [('boolean', 'bool', 'led0'), ('boolean', 'bool', 'led1'),
             ('boolean', 'bool', 'led2'), ('boolean', 'bool', 'led3')],
    'LightSensors': [('int16', 'int16', 'forward_r'), ('int16', 'int16', 'forward_l'),
                     ('int16', 'int16', 'left'), ('int16', 'int16', 'right')],
    'Switches': [('boolean', 'bool', 'switch0'), ('boolean', 'bool', 'switch1'),
                 ('boolean', 'bool', 'switch2')],
}
# roslite-msgs' generated hashes (crates/roslite-msgs/src/generated/raspimouse_msgs.rs).
EXPECTED_HASHES = {
    'Leds': 'RIHS01_74612a6ea289df905dcbf795421691a980253517de0a4279effae1df957d5d6f',
    'LightSensors': 'RIHS01_ad82bc7101482b3bd4ed76fc604ce1c2631267d24d20128780394521fd5dc98e',
    'Switches': 'RIHS01_110fb02e8cc06865723ef0d372052df6381f8e4c051e79b362601210b86cd963',
}


def already_installed():
    probe = ('from raspimouse_msgs.msg import LightSensors as L; '
             'L.__class__.__import_type_support__()')
    return subprocess.run([sys.executable, '-c', probe], capture_output=True).returncode == 0


def write_interfaces(src):
    msg_dir = src / PACKAGE / 'msg'
    msg_dir.mkdir(parents=True)
    for name, fields in MESSAGES.items():
        body = ''.join(f'      {idl} {field};\n' for idl, _, field in fields)
        (msg_dir / f'{name}.idl').write_text(
            f'module {PACKAGE} {{\n  module msg {{\n    struct {name} {{\n{body}'
            '    };\n  };\n};\n')
        (msg_dir / f'{name}.msg').write_text(
            ''.join(f'{msg} {field}\n' for _, msg, field in fields))
    return [f'{src / PACKAGE}:msg/{name}.idl' for name in MESSAGES]


def generate(files, out, prefix):
    os.environ.setdefault('AMENT_PREFIX_PATH', prefix)
    import rosidl_cli.entry_points as entry_points
    from importlib import metadata

    # The ros-* wheels install both an .egg-info and a .dist-info for some generators, which
    # rosidl_cli rejects as duplicate entry points; they are the same code, keep the first.
    def get_entry_points(group_name, *, specs=None, strict=False):
        found = {}
        for ep in metadata.entry_points().select(group=group_name):
            if specs and ep.name not in specs:
                continue
            found.setdefault(ep.name, ep)
        return found

    entry_points.get_entry_points = get_entry_points
    from rosidl_cli.command.generate.api import generate as rosidl_generate
    for kind, selection in [('c', dict(types=['c'])), ('py', dict(types=['py'])),
                            ('ts_c', dict(typesupports=['c'])),
                            ('fastrtps_c', dict(typesupports=['fastrtps_c'])),
                            ('introspection_c', dict(typesupports=['introspection_c']))]:
        rosidl_generate(package_name=PACKAGE, interface_files=files,
                        output_path=out / kind / PACKAGE, **selection)


def compile_all(out, build, prefix):
    include = pathlib.Path(prefix) / 'include'
    incs = [f'-I{include}'] + [f'-I{d}' for d in sorted(include.iterdir()) if d.is_dir()]
    lib = f'-L{pathlib.Path(prefix) / "lib"}'
    py_inc = f'-I{sysconfig.get_paths()["include"]}'
    import numpy
    np_inc = f'-I{numpy.get_include()}'
    gen_c = f'-I{out / "c"}'
    detail = f'{PACKAGE}/msg/detail'

    def cc(compiler, sources, output, extra_inc=(), libs=()):
        cmd = [compiler, '-shared', '-fPIC', '-O2', *(['-std=c++17'] if compiler == 'g++' else []),
               gen_c, *extra_inc, *incs, *sources, f'-L{build}', lib, *libs, '-o',
               str(build / output)]
        subprocess.run(cmd, check=True)

    def src(kind, pattern):
        return sorted(glob.glob(str(out / kind / pattern)))

    cc('gcc', src('c', f'{detail}/*.c'), f'lib{PACKAGE}__rosidl_generator_c.so',
       libs=['-lrosidl_runtime_c', '-lrcutils'])
    own_c = [f'-l{PACKAGE}__rosidl_generator_c']
    cc('g++', src('fastrtps_c', f'{detail}/*.cpp'),
       f'lib{PACKAGE}__rosidl_typesupport_fastrtps_c.so', [f'-I{out / "fastrtps_c"}'],
       own_c + ['-lrosidl_typesupport_fastrtps_c', '-lrosidl_typesupport_fastrtps_cpp',
                '-lfastcdr', '-lrmw', '-lrosidl_runtime_c', '-lrcutils'])
    cc('gcc', src('introspection_c', f'{detail}/*.c'),
       f'lib{PACKAGE}__rosidl_typesupport_introspection_c.so', [f'-I{out / "introspection_c"}'],
       own_c + ['-lrosidl_typesupport_introspection_c', '-lrosidl_runtime_c', '-lrcutils'])
    cc('g++', src('ts_c', f'{PACKAGE}/msg/*.cpp'), f'lib{PACKAGE}__rosidl_typesupport_c.so',
       libs=own_c + ['-lrosidl_typesupport_c', '-lrosidl_runtime_c', '-lrcutils'])
    cc('gcc', src('py', f'{PACKAGE}/msg/*_s.c'), f'lib{PACKAGE}__rosidl_generator_py.so',
       [f'-I{out / "py"}', np_inc, py_inc],
       own_c + [f'-l{PACKAGE}__rosidl_typesupport_c', '-lrosidl_runtime_c', '-lrcutils'])
    cc('gcc', src('py', f'{PACKAGE}/_{PACKAGE}_s.ep.rosidl_typesupport_c.c'),
       f'{PACKAGE}_s__rosidl_typesupport_c.so', [py_inc],
       [f'-l{PACKAGE}__rosidl_generator_py', f'-l{PACKAGE}__rosidl_typesupport_c'] + own_c +
       ['-lrosidl_runtime_c', '-lrcutils'])


def install(out, build, prefix, src):
    prefix = pathlib.Path(prefix)
    for so in build.glob(f'lib{PACKAGE}__*.so'):
        shutil.copy2(so, prefix / 'lib' / so.name)
    site = pathlib.Path(sysconfig.get_paths()['purelib'])
    if pathlib.Path(prefix).resolve() != pathlib.Path(sys.prefix).resolve():
        site = prefix / 'python'
    package = site / PACKAGE
    shutil.rmtree(package, ignore_errors=True)
    (package / 'msg').mkdir(parents=True)
    (package / '__init__.py').write_text('')
    for py in (out / 'py' / PACKAGE / 'msg').glob('*.py'):
        shutil.copy2(py, package / 'msg' / py.name)
    shutil.copy2(build / f'{PACKAGE}_s__rosidl_typesupport_c.so', package)
    share = prefix / 'share' / PACKAGE / 'msg'
    share.mkdir(parents=True, exist_ok=True)
    for f in list((src / PACKAGE / 'msg').iterdir()) + list((out / 'c' / PACKAGE / 'msg').glob('*.json')):
        shutil.copy2(f, share / f.name)
    index = prefix / 'share' / 'ament_index' / 'resource_index'
    for kind in ('packages', 'rosidl_interfaces'):
        (index / kind).mkdir(parents=True, exist_ok=True)
    (index / 'packages' / PACKAGE).write_text('')
    (index / 'rosidl_interfaces' / PACKAGE).write_text(
        '\n'.join(f'msg/{n}.idl\nmsg/{n}.msg' for n in MESSAGES))


def check_hashes(out):
    for name, expected in EXPECTED_HASHES.items():
        doc = json.loads((out / 'c' / PACKAGE / 'msg' / f'{name}.json').read_text())
        got = doc['type_hashes'][0]['hash_string']
        if got != expected:
            sys.exit(f'{name}: type hash {got} differs from roslite\'s {expected}')


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--prefix', default=sys.prefix)
    parser.add_argument('--force', action='store_true')
    args = parser.parse_args()
    if not args.force and args.prefix == sys.prefix and already_installed():
        print(f'{PACKAGE} is already usable from {sys.executable}')
        return
    with tempfile.TemporaryDirectory(prefix='raspimouse_msgs-') as tmp:
        tmp = pathlib.Path(tmp)
        src, out, build = tmp / 'src', tmp / 'gen', tmp / 'build'
        build.mkdir()
        files = write_interfaces(src)
        generate(files, out, args.prefix)
        check_hashes(out)
        compile_all(out, build, args.prefix)
        install(out, build, args.prefix, src)
    if args.prefix == sys.prefix and not already_installed():
        sys.exit(f'{PACKAGE} was installed into {args.prefix} but still cannot be imported')
    print(f'{PACKAGE} installed into {args.prefix}')


if __name__ == '__main__':
    main()
