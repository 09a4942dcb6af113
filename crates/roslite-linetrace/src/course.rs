//! The course: a closed black line on a white floor.
//!
//! Modelled on rt-net's Gazebo field `line_follower_field1` (`raspimouse_sim`,
//! `raspimouse_gazebo/worlds/line_follower_field1.sdf`): 50 cm tiles on a 3 x 2 grid, the line
//! running through the tile centres as two straights joined by two semicircles, a stadium:
//!
//! ```text
//!   y
//!  1.00 +-----------------+-----------------+-----------------+
//!       |                 |                 |                 |
//!  0.75 |       .---------+-----------------+---------.       |
//!       |     /           |      <---       |           \     |
//!  0.50 +----|      c0    +                 +    c1      |----+   c0 = (0.50, 0.50)
//!       |     \           |      --->       |           /     |   c1 = (1.00, 0.50)
//!  0.25 |       '---------+-----------------+---------'       |   radius 0.25
//!       |                 |                 |                 |
//!  0.00 +-----------------+-----------------+-----------------+ x
//!      0.00              0.50              1.00              1.50
//! ```
//!
//! The line is [`LINE_WIDTH`] wide; its centre line is 2.571 m long. Arc length `s` runs
//! counter-clockwise from (0.50, 0.25), the start of the lower straight.

use std::f64::consts::PI;

/// Width of the black tape, in metres.
pub const LINE_WIDTH: f64 = 0.025;
/// Radius of the two semicircles (centre line), in metres.
pub const RADIUS: f64 = 0.25;
/// Centres of the left and right semicircles.
pub const LEFT_CENTRE: (f64, f64) = (0.50, 0.50);
pub const RIGHT_CENTRE: (f64, f64) = (1.00, 0.50);
/// The floor: 3 x 2 tiles of 0.5 m.
pub const FLOOR: (f64, f64) = (1.50, 1.00);

const STRAIGHT: f64 = RIGHT_CENTRE.0 - LEFT_CENTRE.0;

/// Length of the centre line: one lap.
pub fn lap_length() -> f64 {
    2.0 * STRAIGHT + 2.0 * PI * RADIUS
}

/// The point of the centre line nearest to `p`: its arc length and the signed distance of `p`
/// from it (positive to the left of the direction of travel, i.e. towards the inside).
pub fn project(x: f64, y: f64) -> (f64, f64) {
    let (lx, cy) = LEFT_CENTRE;
    let rx = RIGHT_CENTRE.0;
    if (lx..=rx).contains(&x) {
        // Lower straight (heading +x) or upper straight (heading -x), whichever is nearer.
        let lower = cy - RADIUS;
        let upper = cy + RADIUS;
        if (y - lower).abs() <= (y - upper).abs() {
            (x - lx, y - lower)
        } else {
            (STRAIGHT + PI * RADIUS + (rx - x), upper - y)
        }
    } else {
        let (centre, start) = if x > rx {
            (RIGHT_CENTRE, STRAIGHT)
        } else {
            (LEFT_CENTRE, 2.0 * STRAIGHT + PI * RADIUS)
        };
        let (dx, dy) = (x - centre.0, y - centre.1);
        let r = dx.hypot(dy);
        // Angle travelled along this semicircle from its start (-pi/2 on the right one,
        // +pi/2 on the left one), counter-clockwise.
        let base = if x > rx { -PI / 2.0 } else { PI / 2.0 };
        let mut travelled = dy.atan2(dx) - base;
        travelled = travelled.rem_euclid(2.0 * PI);
        if travelled > PI {
            // Past the end of this arc (can only happen on the boundary lines x = lx, rx).
            travelled = if travelled > 1.5 * PI { 0.0 } else { PI };
        }
        (start + travelled * RADIUS, RADIUS - r)
    }
}

/// Distance from `p` to the line's centre line.
pub fn distance_to_centre_line(x: f64, y: f64) -> f64 {
    project(x, y).1.abs()
}

/// The centre-line point at arc length `s` and the heading there.
pub fn point_at(s: f64) -> (f64, f64, f64) {
    let s = s.rem_euclid(lap_length());
    let (lx, cy) = LEFT_CENTRE;
    let arc = PI * RADIUS;
    if s < STRAIGHT {
        (lx + s, cy - RADIUS, 0.0)
    } else if s < STRAIGHT + arc {
        let a = -PI / 2.0 + (s - STRAIGHT) / RADIUS;
        let (cx, cy) = RIGHT_CENTRE;
        (cx + RADIUS * a.cos(), cy + RADIUS * a.sin(), a + PI / 2.0)
    } else if s < 2.0 * STRAIGHT + arc {
        let along = s - STRAIGHT - arc;
        (RIGHT_CENTRE.0 - along, cy + RADIUS, PI)
    } else {
        let a = PI / 2.0 + (s - 2.0 * STRAIGHT - arc) / RADIUS;
        let (cx, cy) = LEFT_CENTRE;
        (cx + RADIUS * a.cos(), cy + RADIUS * a.sin(), a + PI / 2.0)
    }
}

/// How much of a light sensor's spot (a disc of radius `spot` metres at `p`) is black tape:
/// 0 on the floor, 1 over the line, a linear blend across each edge.
pub fn line_coverage(x: f64, y: f64, spot: f64) -> f64 {
    let d = distance_to_centre_line(x, y);
    ((LINE_WIDTH / 2.0 + spot - d) / (2.0 * spot)).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn projection_inverts_point_at_all_around_the_lap() {
        let n = 400;
        for i in 0..n {
            let s = lap_length() * f64::from(i) / f64::from(n);
            let (x, y, heading) = point_at(s);
            let (s2, d) = project(x, y);
            let ds = (s2 - s).rem_euclid(lap_length());
            assert!(ds < 1e-9 || lap_length() - ds < 1e-9, "s {s} -> {s2}");
            assert!(d.abs() < 1e-9);
            // A point 1 cm to the left of travel is +1 cm off the line.
            let (lx, ly) = (x - 0.01 * heading.sin(), y + 0.01 * heading.cos());
            assert!((project(lx, ly).1 - 0.01).abs() < 1e-9, "s {s}");
        }
    }

    #[test]
    fn coverage_is_full_on_the_line_and_zero_on_the_floor() {
        assert_eq!(line_coverage(0.75, 0.25, 0.004), 1.0);
        assert_eq!(line_coverage(0.75, 0.50, 0.004), 0.0);
        // Exactly on the edge: half the spot is tape.
        let edge = 0.25 + LINE_WIDTH / 2.0;
        assert!((line_coverage(0.75, edge, 0.004) - 0.5).abs() < 1e-12);
        assert!((lap_length() - 2.5708).abs() < 1e-3);
    }
}
