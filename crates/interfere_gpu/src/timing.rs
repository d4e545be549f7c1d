//! Kernel-only timings of the GPU traversal and brute-force kernels (Greß & Zachmann 2004 report
//! per-stage times in section 6) from GPU timestamp queries, where the adapter offers
//! [`wgpu::Features::TIMESTAMP_QUERY`]; otherwise only host wall-clock time is known.
//!
//! Passes get their begin/end timestamps through `timestamp_writes`; the prefix sum, which
//! records its own pass, is bracketed with encoder timestamps when the device also has
//! [`wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS`] (otherwise its time is `None`).

use crate::context::GpuContext;
use crate::error::GpuError;
use crate::readback::map_and_copy;
use std::time::Duration;

/// The most timestamps one query records; past it the kernel times are dropped (`None`).
const MAX_QUERIES: u32 = 4096;

/// Kernel times summed over all passes of one query (from GPU timestamps).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct KernelTimes {
    /// Box tests and leaf triangle tests of the traversal (`count` passes), or the brute-force
    /// kernel.
    pub test: Duration,
    /// Prefix sums (`None` without encoder timestamps, or for the brute-force kernel).
    pub scan: Option<Duration>,
    /// Child-pair scatter passes (zero for the brute-force kernel).
    pub scatter: Duration,
}

impl KernelTimes {
    /// Sum of the stages.
    pub fn total(&self) -> Duration {
        self.test + self.scan.unwrap_or_default() + self.scatter
    }
}

/// Per-stage timings returned with every query's results.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct StageTimings {
    /// GPU kernel times; `None` when the adapter lacks timestamp queries.
    pub kernels: Option<KernelTimes>,
    /// Host wall-clock time of the whole query (palette upload, dispatches, waits, readbacks;
    /// not the final timestamp resolve).
    pub wall: Duration,
    /// Host time spent waiting for readbacks (counts and the final list).
    pub readback: Duration,
    /// Number of round trips to the GPU (each waits for one small or final readback; the
    /// timestamp resolve is not counted).
    pub round_trips: u32,
    /// Traversal steps run (0 for the brute-force kernel).
    pub steps: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stage {
    Test,
    Scan,
    Scatter,
}

/// Timestamp recording for one query.
pub(crate) struct Timestamps {
    set: wgpu::QuerySet,
    encoder_writes: bool,
    used: u32,
    overflowed: bool,
    stages: Vec<(Stage, u32)>,
}

impl Timestamps {
    /// `None` when the device has no timestamp queries.
    pub(crate) fn new(ctx: &GpuContext) -> Option<Self> {
        let features = ctx.device.features();
        if !features.contains(wgpu::Features::TIMESTAMP_QUERY) {
            return None;
        }
        let set = ctx.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("interfere kernel timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: MAX_QUERIES,
        });
        Some(Self {
            set,
            encoder_writes: features.contains(wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS),
            used: 0,
            overflowed: false,
            stages: Vec::new(),
        })
    }

    fn take(&mut self, stage: Stage) -> Option<u32> {
        if self.used + 2 > MAX_QUERIES {
            self.overflowed = true;
            return None;
        }
        let i = self.used;
        self.used += 2;
        self.stages.push((stage, i));
        Some(i)
    }

    /// Begin/end writes for one compute pass of `stage`.
    pub(crate) fn pass(&mut self, stage: Stage) -> Option<wgpu::ComputePassTimestampWrites<'_>> {
        let i = self.take(stage)?;
        Some(wgpu::ComputePassTimestampWrites {
            query_set: &self.set,
            beginning_of_pass_write_index: Some(i),
            end_of_pass_write_index: Some(i + 1),
        })
    }

    /// Records `record` into `encoder` between two encoder timestamps of `stage` (when the device
    /// allows encoder timestamps).
    pub(crate) fn bracket<R>(
        &mut self,
        encoder: &mut wgpu::CommandEncoder,
        stage: Stage,
        record: impl FnOnce(&mut wgpu::CommandEncoder) -> R,
    ) -> R {
        let index = if self.encoder_writes {
            self.take(stage)
        } else {
            None
        };
        if let Some(i) = index {
            encoder.write_timestamp(&self.set, i);
        }
        let out = record(encoder);
        if let Some(i) = index {
            encoder.write_timestamp(&self.set, i + 1);
        }
        out
    }

    /// Resolves and reads back all timestamps (one round trip), summing them per stage.
    pub(crate) fn resolve(self, ctx: &GpuContext) -> Result<Option<KernelTimes>, GpuError> {
        if self.overflowed {
            return Ok(None);
        }
        let mut times = KernelTimes {
            scan: self.encoder_writes.then_some(Duration::ZERO),
            ..KernelTimes::default()
        };
        if self.used == 0 {
            return Ok(Some(times));
        }
        let bytes = u64::from(self.used) * 8;
        let resolve = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamp resolve"),
            size: bytes,
            usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("timestamp staging"),
            size: bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        encoder.resolve_query_set(&self.set, 0..self.used, &resolve, 0);
        encoder.copy_buffer_to_buffer(&resolve, 0, &staging, 0, bytes);
        ctx.queue.submit([encoder.finish()]);
        let ticks: Vec<u64> = map_and_copy(ctx, "timestamps", &staging, self.used as usize)?;
        let period = f64::from(ctx.queue.get_timestamp_period());
        for &(stage, i) in &self.stages {
            let (begin, end) = (ticks[i as usize], ticks[i as usize + 1]);
            let d = Duration::from_nanos((end.saturating_sub(begin) as f64 * period) as u64);
            match stage {
                Stage::Test => times.test += d,
                Stage::Scatter => times.scatter += d,
                Stage::Scan => {
                    if let Some(s) = times.scan.as_mut() {
                        *s += d;
                    }
                }
            }
        }
        Ok(Some(times))
    }
}
