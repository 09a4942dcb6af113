//! The rclpy robot (interop/python/linetrace/linetrace.py) simulates the same robot: for a
//! seed, the same poses give the same sensor readings and the same motion, value for value.

use std::process::Command;

use roslite_linetrace::robot::{Pose, Robot, LINE_START_POSE};

const SCRIPT: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../interop/python/linetrace/linetrace.py"
);

#[test]
fn python_and_rust_robots_agree() {
    // Drive both: 300 steps of a fixed command sequence, reading the sensors at each.
    let program = format!(
        "import importlib.util, sys\n\
         spec = importlib.util.spec_from_file_location('lt', '{SCRIPT}')\n\
         lt = importlib.util.module_from_spec(spec); spec.loader.exec_module(lt)\n\
         r = lt.Robot(42, lt.LINE_START_POSE)\n\
         r.set_motor_power(True)\n\
         for i in range(300):\n\
         \x20   r.handle_cmd_vel(0.08, [0.0, 0.5, -0.8, 1.3][i // 50 % 4])\n\
         \x20   r.step(0.01)\n\
         \x20   v = r.read_light_sensors()\n\
         \x20   print(v['forward_r'], v['right'], v['left'], v['forward_l'], repr(r.pose[0]), repr(r.pose[1]))\n"
    );
    let out = Command::new("python3")
        .args(["-c", &program])
        .output()
        .expect("python3 runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let python = String::from_utf8(out.stdout).unwrap();

    let mut robot = Robot::new(42, LINE_START_POSE);
    robot.set_motor_power(true);
    let mut rust = String::new();
    for i in 0..300 {
        robot.handle_cmd_vel(0.08, [0.0, 0.5, -0.8, 1.3][i / 50 % 4]);
        robot.step(0.01);
        let v = robot.read_light_sensors();
        let Pose { x, y, .. } = robot.pose();
        rust += &format!(
            "{} {} {} {} {x:?} {y:?}\n",
            v.forward_r, v.right, v.left, v.forward_l
        );
    }
    let (p, r): (Vec<&str>, Vec<&str>) = (python.lines().collect(), rust.lines().collect());
    assert_eq!(p.len(), r.len());
    for (i, (p, r)) in p.iter().zip(&r).enumerate() {
        assert_eq!(p, r, "step {i}: python vs rust");
    }
}
