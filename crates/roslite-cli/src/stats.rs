//! Summary statistics over latency samples.

use std::time::Duration;

/// Order statistics of a set of durations, in microseconds.
#[derive(Clone, Copy, Debug)]
pub struct Summary {
    pub count: usize,
    pub min_us: f64,
    pub mean_us: f64,
    pub p50_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
    pub stddev_us: f64,
}

impl Summary {
    /// `None` for an empty sample set.
    pub fn of(samples: &[Duration]) -> Option<Self> {
        if samples.is_empty() {
            return None;
        }
        let mut us: Vec<f64> = samples.iter().map(|d| d.as_secs_f64() * 1e6).collect();
        us.sort_by(f64::total_cmp);
        let count = us.len();
        let mean = us.iter().sum::<f64>() / count as f64;
        let variance = us.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / count as f64;
        // Nearest-rank percentiles.
        let rank = |p: f64| us[((p * count as f64).ceil() as usize).clamp(1, count) - 1];
        Some(Self {
            count,
            min_us: us[0],
            mean_us: mean,
            p50_us: rank(0.50),
            p99_us: rank(0.99),
            max_us: us[count - 1],
            stddev_us: variance.sqrt(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_are_nearest_rank() {
        let samples: Vec<Duration> = (1..=100).map(Duration::from_micros).collect();
        let s = Summary::of(&samples).unwrap();
        assert_eq!(
            (s.min_us, s.p50_us, s.p99_us, s.max_us),
            (1.0, 50.0, 99.0, 100.0)
        );
        assert!((s.mean_us - 50.5).abs() < 1e-9);
        assert!(Summary::of(&[]).is_none());
    }
}

/// The median of `values`, for an even count the upper of the two middle values; `None` when
/// empty. NaNs sort last.
pub fn upper_median(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

#[cfg(test)]
mod median_tests {
    use super::upper_median;

    #[test]
    fn upper_median_takes_the_less_flattering_middle() {
        assert_eq!(upper_median(vec![]), None);
        assert_eq!(upper_median(vec![2.0, 0.5, 1.0]), Some(1.0));
        assert_eq!(upper_median(vec![1.5, 0.5]), Some(1.5));
    }
}
