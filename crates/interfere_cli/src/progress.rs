//! Progress reporting for long runs (headless simulations, benchmarks): steps done out of a
//! total, the rate, the elapsed time and the time left, written to standard error so that
//! standard output stays clean for tables and JSON.
//!
//! Three behaviours, chosen by [`Mode`]:
//! - on a terminal ([`Mode::Terminal`], picked by [`Progress::new`] when standard error is one),
//!   a single line redrawn in place at most ten times a second, replaced by a summary at the end;
//! - otherwise ([`Mode::Lines`]), one plain line per interval (five seconds unless
//!   [`Progress::interval`] says otherwise) and a summary line at the end, which suits logs and
//!   CI;
//! - nothing at all ([`Mode::Quiet`], or [`Progress::quiet`]).
//!
//! Usage from a headless loop:
//!
//! ```
//! # let steps = 3;
//! let mut progress = interfere_cli::progress::Progress::new("settle", steps);
//! for _ in 0..steps { /* world.step(&mut source); */ progress.tick(1); }
//! progress.finish();
//! ```
//!
//! No dependency: `indicatif` draws the terminal bar but hides itself when standard error is not
//! a terminal, where this module must print timed plain lines, and its clock cannot be injected,
//! so the tests here drive the reporter with a fake clock and an in-memory writer instead.

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

/// How a [`Progress`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Prints nothing.
    Quiet,
    /// One line redrawn in place (carriage return and clear-to-end-of-line) at most every
    /// [`TERMINAL_REDRAW`], then the summary in its place.
    Terminal,
    /// One plain line each time `interval` has passed since the last one, then a summary line.
    Lines {
        /// Time between two lines.
        interval: Duration,
    },
}

/// The shortest time between two redraws on a terminal.
pub const TERMINAL_REDRAW: Duration = Duration::from_millis(100);

/// The default time between two lines when standard error is not a terminal.
pub const DEFAULT_INTERVAL: Duration = Duration::from_secs(5);

/// Time since the reporter started; injected by tests, `Instant::elapsed` otherwise.
type Clock = Box<dyn FnMut() -> Duration + Send>;

/// A progress reporter for `total` units of work (see the module documentation).
///
/// Dropping it unfinished finishes it, so an early return still ends the terminal line.
pub struct Progress {
    label: String,
    unit: String,
    total: u64,
    done: u64,
    mode: Mode,
    out: Box<dyn Write + Send>,
    clock: Clock,
    /// When the next line or redraw is due.
    next_due: Duration,
    /// Whether a partial line is on the terminal.
    drawn: bool,
    finished: bool,
}

impl Progress {
    /// A reporter on standard error: [`Mode::Terminal`] when standard error is a terminal,
    /// otherwise [`Mode::Lines`] every [`DEFAULT_INTERVAL`]. The unit is "steps".
    pub fn new(label: impl Into<String>, total: u64) -> Self {
        let mode = if std::io::stderr().is_terminal() {
            Mode::Terminal
        } else {
            Mode::Lines {
                interval: DEFAULT_INTERVAL,
            }
        };
        Self::with_mode(label, total, mode)
    }

    /// [`Progress::new`], or [`Progress::quiet`] when `quiet` is set (for a `--quiet` flag).
    pub fn unless_quiet(label: impl Into<String>, total: u64, quiet: bool) -> Self {
        if quiet {
            Self::quiet()
        } else {
            Self::new(label, total)
        }
    }

    /// A reporter that prints nothing.
    pub fn quiet() -> Self {
        Self::with_mode("", 0, Mode::Quiet)
    }

    /// A reporter on standard error in the given mode.
    pub fn with_mode(label: impl Into<String>, total: u64, mode: Mode) -> Self {
        let start = Instant::now();
        Self::with_output(
            label,
            total,
            mode,
            Box::new(std::io::stderr()),
            Box::new(move || start.elapsed()),
        )
    }

    /// A reporter writing to `out` and reading the time since its start from `clock`.
    pub fn with_output(
        label: impl Into<String>,
        total: u64,
        mode: Mode,
        out: Box<dyn Write + Send>,
        clock: Box<dyn FnMut() -> Duration + Send>,
    ) -> Self {
        let next_due = match mode {
            Mode::Quiet => Duration::MAX,
            Mode::Terminal => TERMINAL_REDRAW,
            Mode::Lines { interval } => interval,
        };
        Self {
            label: label.into(),
            unit: "steps".into(),
            total,
            done: 0,
            mode,
            out,
            clock,
            next_due,
            drawn: false,
            finished: false,
        }
    }

    /// Sets the time between two lines of [`Mode::Lines`] (no effect in the other modes).
    pub fn interval(mut self, interval: Duration) -> Self {
        if let Mode::Lines { .. } = self.mode {
            self.mode = Mode::Lines { interval };
            self.next_due = interval;
        }
        self
    }

    /// Names the unit of work ("steps" by default; "poses", "queries", …).
    pub fn unit(mut self, unit: impl Into<String>) -> Self {
        self.unit = unit.into();
        self
    }

    /// The mode it reports in.
    pub fn mode(&self) -> Mode {
        self.mode
    }

    /// Units done so far.
    pub fn done(&self) -> u64 {
        self.done
    }

    /// Records `n` more units done, and reports if a report is due.
    pub fn tick(&mut self, n: u64) {
        self.done = self.done.saturating_add(n);
        if self.mode == Mode::Quiet || self.finished {
            return;
        }
        let now = (self.clock)();
        if now < self.next_due {
            return;
        }
        let line = self.status(now);
        match self.mode {
            Mode::Terminal => {
                self.next_due = now + TERMINAL_REDRAW;
                let _ = write!(self.out, "\r{line}\x1b[K");
                self.drawn = true;
            }
            Mode::Lines { interval } => {
                // The next line is due a whole number of intervals after the start, so a slow
                // step delays one line rather than shifting every later one.
                if interval.is_zero() {
                    self.next_due = now;
                } else {
                    let behind = (now - self.next_due).as_nanos() / interval.as_nanos();
                    let skip = interval.as_nanos().saturating_mul(behind + 1);
                    let skip = Duration::from_nanos(u64::try_from(skip).unwrap_or(u64::MAX));
                    self.next_due = self.next_due.saturating_add(skip);
                }
                let _ = writeln!(self.out, "{line}");
            }
            Mode::Quiet => {}
        }
        let _ = self.out.flush();
    }

    /// Reports the summary (once; later calls and [`Progress::tick`] print nothing).
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        if self.mode == Mode::Quiet {
            return;
        }
        let now = (self.clock)();
        let line = self.summary(now);
        if self.drawn {
            let _ = write!(self.out, "\r\x1b[K");
        }
        let _ = writeln!(self.out, "{line}");
        let _ = self.out.flush();
    }

    /// The progress line at time `now`: done/total, percentage, rate, elapsed, time left.
    fn status(&self, now: Duration) -> String {
        let secs = now.as_secs_f64();
        let rate = if secs > 0.0 {
            self.done as f64 / secs
        } else {
            0.0
        };
        let mut line = format!("{}: {}", self.label, self.done);
        if self.total > 0 {
            let pct = 100.0 * self.done as f64 / self.total as f64;
            line += &format!("/{} {} ({pct:.0}%)", self.total, self.unit);
        } else {
            line += &format!(" {}", self.unit);
        }
        line += &format!(
            ", {} {}/s, elapsed {}",
            format_rate(rate),
            self.unit,
            format_duration(now)
        );
        if self.total > 0 {
            let left = self.total.saturating_sub(self.done);
            if left == 0 {
                line += ", ETA 0.0 s";
            } else if rate > 0.0 {
                let eta = Duration::from_secs_f64((left as f64 / rate).min(1e9));
                line += &format!(", ETA {}", format_duration(eta));
            } else {
                line += ", ETA ?";
            }
        }
        line
    }

    /// The final line: units done, time, rate.
    fn summary(&self, now: Duration) -> String {
        let secs = now.as_secs_f64();
        let mut line = format!("{}: done, {}", self.label, self.done);
        if self.total > 0 && self.done != self.total {
            line += &format!(" of {}", self.total);
        }
        line += &format!(" {} in {}", self.unit, format_duration(now));
        if secs > 0.0 {
            line += &format!(
                " ({} {}/s)",
                format_rate(self.done as f64 / secs),
                self.unit
            );
        }
        line
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A rate with three significant digits ("0.512", "48.8", "1234").
fn format_rate(rate: f64) -> String {
    if rate >= 100.0 {
        format!("{rate:.0}")
    } else if rate >= 10.0 {
        format!("{rate:.1}")
    } else if rate >= 1.0 {
        format!("{rate:.2}")
    } else {
        format!("{rate:.3}")
    }
}

/// A duration for people: "0.4 s", "12.3 s", "4 m 05 s", "2 h 03 m".
fn format_duration(d: Duration) -> String {
    let secs = d.as_secs_f64();
    if secs < 60.0 {
        format!("{secs:.1} s")
    } else if secs < 3600.0 {
        let s = secs as u64;
        format!("{} m {:02} s", s / 60, s % 60)
    } else {
        let m = (secs / 60.0) as u64;
        format!("{} h {:02} m", m / 60, m % 60)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A writer into a shared buffer.
    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    impl Buffer {
        fn text(&self) -> String {
            String::from_utf8(self.0.lock().unwrap().clone()).unwrap()
        }
    }

    /// A clock the test moves by hand, in milliseconds.
    #[derive(Clone, Default)]
    struct FakeClock(Arc<Mutex<u64>>);

    impl FakeClock {
        fn set_ms(&self, ms: u64) {
            *self.0.lock().unwrap() = ms;
        }
        fn boxed(&self) -> Clock {
            let c = self.clone();
            Box::new(move || Duration::from_millis(*c.0.lock().unwrap()))
        }
    }

    fn reporter(total: u64, mode: Mode) -> (Progress, Buffer, FakeClock) {
        let (buf, clock) = (Buffer::default(), FakeClock::default());
        let p = Progress::with_output("run", total, mode, Box::new(buf.clone()), clock.boxed());
        (p, buf, clock)
    }

    const LINES_5S: Mode = Mode::Lines {
        interval: DEFAULT_INTERVAL,
    };

    #[test]
    fn lines_mode_prints_one_line_per_interval_and_a_summary() {
        let (mut p, buf, clock) = reporter(600, LINES_5S);
        // 10 steps per second for 20 s: lines at 5, 10, 15, 20 s.
        for i in 1..=200u64 {
            clock.set_ms(i * 100);
            p.tick(1);
        }
        let text = buf.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        assert_eq!(
            lines[0],
            "run: 50/600 steps (8%), 10.0 steps/s, elapsed 5.0 s, ETA 55.0 s"
        );
        assert_eq!(
            lines[3],
            "run: 200/600 steps (33%), 10.0 steps/s, elapsed 20.0 s, ETA 40.0 s"
        );
        assert!(!text.contains('\r') && !text.contains('\x1b'), "{text:?}");
        clock.set_ms(25_000);
        p.tick(50);
        p.finish();
        p.finish();
        p.tick(1);
        let text = buf.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 6, "{text}");
        assert_eq!(
            lines[5],
            "run: done, 250 of 600 steps in 25.0 s (10.0 steps/s)"
        );
    }

    #[test]
    fn a_slow_step_prints_one_line_not_a_burst() {
        let (mut p, buf, clock) = reporter(10, LINES_5S);
        clock.set_ms(17_000); // past three intervals at once
        p.tick(1);
        clock.set_ms(19_900); // the next line is due at 20 s, not 22 s
        p.tick(1);
        clock.set_ms(20_000);
        p.tick(1);
        let text = buf.text();
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(
            text.lines()
                .nth(1)
                .unwrap()
                .starts_with("run: 3/10 steps (30%)")
        );
    }

    #[test]
    fn configured_interval_and_unit() {
        let (p, buf, clock) = reporter(0, LINES_5S);
        let mut p = p.interval(Duration::from_secs(1)).unit("poses");
        for i in 1..=30u64 {
            clock.set_ms(i * 100);
            p.tick(2);
        }
        drop(p); // finishes
        let text = buf.text();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4, "{text}");
        // Unknown total: no percentage, no time left.
        assert_eq!(lines[0], "run: 20 poses, 20.0 poses/s, elapsed 1.0 s");
        assert_eq!(lines[3], "run: done, 60 poses in 3.0 s (20.0 poses/s)");
    }

    #[test]
    fn terminal_mode_redraws_at_most_ten_times_a_second() {
        let (mut p, buf, clock) = reporter(1000, Mode::Terminal);
        // A tick every 10 ms for 2 s: 200 ticks, at most 20 redraws.
        for i in 1..=200u64 {
            clock.set_ms(i * 10);
            p.tick(1);
        }
        let text = buf.text();
        let redraws = text.matches('\r').count();
        assert_eq!(redraws, 20, "{text:?}");
        assert!(!text.contains('\n'), "no newline while running");
        let last = text.rsplit('\r').next().unwrap();
        assert_eq!(
            last,
            "run: 200/1000 steps (20%), 100 steps/s, elapsed 2.0 s, ETA 8.0 s\x1b[K"
        );
        p.finish();
        let text = buf.text();
        assert!(
            text.ends_with("\r\x1b[Krun: done, 200 of 1000 steps in 2.0 s (100 steps/s)\n"),
            "{text:?}"
        );
        assert_eq!(text.matches('\n').count(), 1);
    }

    #[test]
    fn quiet_prints_nothing() {
        let (mut p, buf, clock) = reporter(10, Mode::Quiet);
        for i in 1..=10u64 {
            clock.set_ms(i * 10_000);
            p.tick(1);
        }
        assert_eq!(p.done(), 10);
        p.finish();
        drop(p);
        assert_eq!(buf.text(), "");
        let mut q = Progress::quiet();
        q.tick(5);
        assert_eq!(q.mode(), Mode::Quiet);
        assert_eq!(Progress::unless_quiet("x", 3, true).mode(), Mode::Quiet);
    }

    #[test]
    fn summary_of_a_complete_run_and_of_an_instant_one() {
        let (mut p, buf, clock) = reporter(4, LINES_5S);
        p.tick(4);
        p.finish();
        // No time passed: no rate, no division by zero.
        assert_eq!(buf.text(), "run: done, 4 steps in 0.0 s\n");
        // Dropped unfinished, mid-way: the summary says how far it got.
        let (mut p, buf, clock2) = reporter(4, LINES_5S);
        clock2.set_ms(1500);
        p.tick(3);
        drop(p);
        assert_eq!(
            buf.text(),
            "run: done, 3 of 4 steps in 1.5 s (2.00 steps/s)\n"
        );
        drop(clock);
    }

    #[test]
    fn durations_and_rates_are_formatted_for_people() {
        let d = |s: f64| format_duration(Duration::from_secs_f64(s));
        assert_eq!(d(0.04), "0.0 s");
        assert_eq!(d(12.34), "12.3 s");
        assert_eq!(d(245.0), "4 m 05 s");
        assert_eq!(d(7385.0), "2 h 03 m");
        assert_eq!(format_rate(0.5123), "0.512");
        assert_eq!(format_rate(4.5), "4.50");
        assert_eq!(format_rate(48.84), "48.8");
        assert_eq!(format_rate(1234.4), "1234");
        // A stalled run has no estimate.
        let (mut p, buf, clock) = reporter(10, LINES_5S);
        clock.set_ms(5_000);
        p.tick(0);
        assert_eq!(
            buf.text(),
            "run: 0/10 steps (0%), 0.000 steps/s, elapsed 5.0 s, ETA ?\n"
        );
    }
}
