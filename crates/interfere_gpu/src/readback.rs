//! Buffer helpers: create storage buffers from slices within the device's limits, and read them
//! back to the CPU through a staging buffer.

use crate::context::GpuContext;
use crate::error::GpuError;

/// Creates a storage buffer holding `data` (at least 4 bytes, so empty inputs still bind),
/// checking the device's per-binding limit first.
pub fn storage_buffer<T: bytemuck::Pod>(
    ctx: &GpuContext,
    what: &'static str,
    data: &[T],
    extra_usage: wgpu::BufferUsages,
) -> Result<wgpu::Buffer, GpuError> {
    let bytes: &[u8] = bytemuck::cast_slice(data);
    check_size(ctx, what, bytes.len() as u64)?;
    Ok(init_buffer(
        ctx,
        what,
        bytes,
        wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | extra_usage,
    ))
}

/// A buffer of at least 4 bytes holding `contents`, written through the queue (not mapped at
/// creation: on a lost device a buffer is invalid and mapping it would panic, while a queue
/// write is only an error for the error scopes).
pub(crate) fn init_buffer(
    ctx: &GpuContext,
    label: &'static str,
    contents: &[u8],
    usage: wgpu::BufferUsages,
) -> wgpu::Buffer {
    let size = (contents.len() as u64).max(4).next_multiple_of(4);
    let buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size,
        usage: usage | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    if !contents.is_empty() {
        if contents.len().is_multiple_of(4) {
            ctx.queue.write_buffer(&buffer, 0, contents);
        } else {
            let mut padded = contents.to_vec();
            padded.resize(size as usize, 0);
            ctx.queue.write_buffer(&buffer, 0, &padded);
        }
    }
    buffer
}

/// Creates an uninitialised storage buffer of `bytes` bytes (at least 4).
pub fn storage_buffer_sized(
    ctx: &GpuContext,
    what: &'static str,
    bytes: u64,
    extra_usage: wgpu::BufferUsages,
) -> Result<wgpu::Buffer, GpuError> {
    check_size(ctx, what, bytes)?;
    Ok(ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(what),
        size: bytes.max(4).next_multiple_of(4),
        usage: wgpu::BufferUsages::STORAGE
            | wgpu::BufferUsages::COPY_SRC
            | wgpu::BufferUsages::COPY_DST
            | extra_usage,
        mapped_at_creation: false,
    }))
}

/// The most bytes one storage buffer may hold on the device: the smaller of its storage-binding
/// and buffer-size limits.
pub fn buffer_limit(ctx: &GpuContext) -> u64 {
    let limits = ctx.device.limits();
    limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size)
}

/// Fails with [`GpuError::BufferTooLarge`] when `bytes` exceeds the device's storage-binding or
/// buffer-size limit.
pub fn check_size(ctx: &GpuContext, what: &'static str, bytes: u64) -> Result<(), GpuError> {
    let limit = buffer_limit(ctx);
    if bytes > limit {
        return Err(GpuError::BufferTooLarge {
            what,
            requested: bytes,
            limit,
        });
    }
    Ok(())
}

/// Fails with [`GpuError::DispatchTooLarge`] when a 1-D dispatch of `groups` workgroups exceeds
/// the device's limit.
pub fn check_dispatch(ctx: &GpuContext, what: &'static str, groups: u64) -> Result<u32, GpuError> {
    let limit = ctx.device.limits().max_compute_workgroups_per_dimension as u64;
    if groups > limit {
        return Err(GpuError::DispatchTooLarge {
            what,
            requested: groups,
            limit,
        });
    }
    Ok(groups as u32)
}

/// Copies the first `len` elements of `buffer` into a staging buffer, waits, and returns them.
pub fn read_buffer<T: bytemuck::Pod>(
    ctx: &GpuContext,
    what: &'static str,
    buffer: &wgpu::Buffer,
    len: usize,
) -> Result<Vec<T>, GpuError> {
    let bytes = (len * std::mem::size_of::<T>()) as u64;
    if bytes == 0 {
        return Ok(Vec::new());
    }
    let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
        label: Some("interfere readback staging"),
        size: bytes.next_multiple_of(4),
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut encoder = ctx
        .device
        .create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("interfere readback"),
        });
    encoder.copy_buffer_to_buffer(buffer, 0, &staging, 0, bytes.next_multiple_of(4));
    ctx.queue.submit([encoder.finish()]);
    map_and_copy(ctx, what, &staging, len)
}

/// Maps an already filled `MAP_READ` buffer, waits, and returns its first `len` elements.
pub fn map_and_copy<T: bytemuck::Pod>(
    ctx: &GpuContext,
    what: &'static str,
    staging: &wgpu::Buffer,
    len: usize,
) -> Result<Vec<T>, GpuError> {
    let (sender, receiver) = std::sync::mpsc::channel();
    staging.map_async(wgpu::MapMode::Read, .., move |result| {
        let _ = sender.send(result);
    });
    ctx.wait()?;
    match receiver.recv() {
        Ok(Ok(())) => {}
        Ok(Err(e)) => {
            return Err(GpuError::Readback {
                what,
                reason: e.to_string(),
            });
        }
        Err(_) => {
            return Err(GpuError::Readback {
                what,
                reason: "the map callback never ran".into(),
            });
        }
    }
    let out = {
        let view = staging.get_mapped_range(..);
        let bytes = &view[..len * std::mem::size_of::<T>()];
        bytemuck::pod_collect_to_vec(bytes)
    };
    staging.unmap();
    Ok(out)
}

/// A region of a [`ReadbackPlan`]'s staging buffer: where one copied range lands.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Region {
    /// Byte offset in the staging buffer.
    pub offset: u64,
    /// Length in bytes.
    pub len: u64,
}

impl Region {
    /// The region's bytes in a copy of the whole staging buffer.
    pub(crate) fn bytes<'a>(&self, all: &'a [u8]) -> &'a [u8] {
        &all[self.offset as usize..(self.offset + self.len) as usize]
    }

    /// The region's `u32` words in a copy of the whole staging buffer.
    pub(crate) fn words(&self, all: &[u8]) -> Vec<u32> {
        bytemuck::pod_collect_to_vec(self.bytes(all))
    }
}

/// Everything one round reads back, gathered into one staging buffer: each `add` names a
/// source range, [`ReadbackPlan::record`] copies them all at the end of the round's encoder and
/// one `map_async` then brings them back together.
#[derive(Default)]
pub(crate) struct ReadbackPlan {
    copies: Vec<(wgpu::Buffer, u64, u64, u64)>,
    size: u64,
}

impl ReadbackPlan {
    /// Adds `len` bytes of `source` from `offset` (both multiples of 4; a zero length gives an
    /// empty region).
    pub(crate) fn add(&mut self, source: &wgpu::Buffer, offset: u64, len: u64) -> Region {
        let region = Region {
            offset: self.size,
            len,
        };
        if len > 0 {
            self.copies
                .push((source.clone(), offset, self.size, len.next_multiple_of(4)));
            self.size += len.next_multiple_of(4);
        }
        region
    }

    /// Total bytes read back.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }

    /// Records the copies into `encoder` and returns the staging buffer (at least 4 bytes).
    pub(crate) fn record(
        self,
        ctx: &GpuContext,
        encoder: &mut wgpu::CommandEncoder,
    ) -> Result<wgpu::Buffer, GpuError> {
        let limit = ctx.device.limits().max_buffer_size;
        if self.size > limit {
            return Err(GpuError::BufferTooLarge {
                what: "readback staging",
                requested: self.size,
                limit,
            });
        }
        let staging = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("interfere job staging"),
            size: self.size.max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        for (source, from, to, len) in &self.copies {
            encoder.copy_buffer_to_buffer(source, *from, &staging, *to, *len);
        }
        Ok(staging)
    }
}

const MAP_PENDING: u8 = 0;
const MAP_DONE: u8 = 1;
const MAP_FAILED: u8 = 2;

/// A `map_async` in flight. The callback copies the mapped bytes out and unmaps the buffer
/// right away (so a device destroyed later cannot take them away), then sets a flag that
/// [`MapWatch::state`] reads without waiting.
#[derive(Debug)]
pub(crate) struct MapWatch {
    flag: std::sync::Arc<std::sync::atomic::AtomicU8>,
    data: std::sync::Arc<std::sync::Mutex<Result<Vec<u8>, String>>>,
}

/// What a [`MapWatch`] saw.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum MapState {
    /// The callback has not run yet.
    Pending,
    /// Mapped and copied: [`MapWatch::take`] gives the bytes.
    Done,
    /// The map failed (the reason).
    Failed(String),
}

impl MapWatch {
    /// Starts mapping all of `buffer` for reading.
    pub(crate) fn start(buffer: wgpu::Buffer) -> Self {
        use std::sync::atomic::{AtomicU8, Ordering};
        let flag = std::sync::Arc::new(AtomicU8::new(MAP_PENDING));
        let data = std::sync::Arc::new(std::sync::Mutex::new(Ok(Vec::new())));
        let (f, d) = (flag.clone(), data.clone());
        let mapped = buffer.clone();
        buffer.map_async(wgpu::MapMode::Read, .., move |result| {
            let out = match result {
                // A device destroyed at this moment makes wgpu panic on the mapped range
                // (its buffers are gone although the map reported success): that is a lost
                // device, not a reason to unwind through the poll.
                Ok(()) => std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    let bytes = mapped.get_mapped_range(..).to_vec();
                    mapped.unmap();
                    bytes
                }))
                .map_err(|_| "the mapped buffer was destroyed (device lost)".to_string()),
                Err(why) => Err(why.to_string()),
            };
            let failed = out.is_err();
            if let Ok(mut slot) = d.lock() {
                *slot = out;
            }
            f.store(
                if failed { MAP_FAILED } else { MAP_DONE },
                Ordering::Release,
            );
        });
        Self { flag, data }
    }

    /// The current state (never waits).
    pub(crate) fn state(&self) -> MapState {
        match self.flag.load(std::sync::atomic::Ordering::Acquire) {
            MAP_PENDING => MapState::Pending,
            MAP_DONE => MapState::Done,
            _ => MapState::Failed(match self.data.lock() {
                Ok(d) => d.as_ref().err().cloned().unwrap_or_default(),
                Err(_) => "the map callback panicked".into(),
            }),
        }
    }

    /// The bytes (empty unless in [`MapState::Done`]).
    pub(crate) fn take(self) -> Vec<u8> {
        match self.data.lock() {
            Ok(mut d) => std::mem::replace(&mut *d, Ok(Vec::new())).unwrap_or_default(),
            Err(_) => Vec::new(),
        }
    }
}

/// Error scopes (validation, out of memory, internal) around a stretch of GPU work on one
/// thread, so that wgpu errors become [`GpuError::Wgpu`] instead of reaching the device's
/// uncaptured-error handler (which panics by default).
pub(crate) struct ErrorScopes {
    guards: Vec<wgpu::ErrorScopeGuard>,
}

impl ErrorScopes {
    /// Pushes the three scopes on `ctx`'s device (this thread).
    pub(crate) fn push(ctx: &GpuContext) -> Self {
        Self {
            guards: [
                wgpu::ErrorFilter::Validation,
                wgpu::ErrorFilter::OutOfMemory,
                wgpu::ErrorFilter::Internal,
            ]
            .into_iter()
            .map(|f| ctx.device.push_error_scope(f))
            .collect(),
        }
    }

    /// Pops the scopes; the first error caught, if any. Native wgpu answers at once; a backend
    /// whose answer is not ready is taken as no error (this never waits).
    pub(crate) fn pop(mut self, what: &'static str) -> Result<(), GpuError> {
        let mut first = None;
        while let Some(guard) = self.guards.pop() {
            let mut future = std::pin::pin!(guard.pop());
            let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
            if let std::task::Poll::Ready(Some(e)) = future.as_mut().poll(&mut cx)
                && first.is_none()
            {
                first = Some(e.to_string());
            }
        }
        match first {
            Some(message) => Err(GpuError::Wgpu { what, message }),
            None => Ok(()),
        }
    }
}

/// Runs `work` inside [`ErrorScopes`]: its own error first, else the first wgpu error caught.
pub(crate) fn scoped<T>(
    ctx: &GpuContext,
    what: &'static str,
    work: impl FnOnce() -> Result<T, GpuError>,
) -> Result<T, GpuError> {
    let scopes = ErrorScopes::push(ctx);
    let out = work();
    let caught = scopes.pop(what);
    let out = out?;
    caught?;
    Ok(out)
}

/// Maps `staging`, waits for it (blocking) and returns its bytes: the blocking APIs' readback.
pub(crate) fn wait_for(
    ctx: &GpuContext,
    what: &'static str,
    staging: wgpu::Buffer,
) -> Result<Vec<u8>, GpuError> {
    let watch = scoped(ctx, what, || Ok(MapWatch::start(staging)))?;
    let mut stalls = StallCount::default();
    loop {
        match watch.state() {
            MapState::Done => return Ok(watch.take()),
            MapState::Failed(reason) => return Err(GpuError::Readback { what, reason }),
            MapState::Pending => {
                let status = ctx.device.poll(wgpu::PollType::wait_indefinitely())?;
                if watch.state() == MapState::Pending {
                    stalls.check(what, status.is_queue_empty())?;
                    std::thread::sleep(std::time::Duration::from_micros(200));
                }
            }
        }
    }
}

/// Counts polls that found the device's queue empty while a readback was still pending. A poll
/// that finds the queue empty runs the callbacks of every finished map, so a readback still
/// pending after such polls will never come (the device was lost). On a device shared with
/// other threads (Bevy's render device, tests) another thread's poll may be running our callback
/// at that moment, so it takes several such polls in a row over at least two seconds.
#[derive(Debug, Default)]
pub(crate) struct StallCount {
    polls: u32,
    since: Option<std::time::Instant>,
}

impl StallCount {
    /// Polls in a row that may find an empty queue before the device counts as lost.
    const POLLS: u32 = 8;
    /// And the time they must span.
    const SPAN: std::time::Duration = std::time::Duration::from_secs(2);

    /// Records one poll's answer; [`GpuError::DeviceLost`] past the limits.
    pub(crate) fn check(&mut self, what: &'static str, queue_empty: bool) -> Result<(), GpuError> {
        if !queue_empty {
            *self = Self::default();
            return Ok(());
        }
        self.polls += 1;
        let since = *self.since.get_or_insert_with(std::time::Instant::now);
        if self.polls >= Self::POLLS && since.elapsed() >= Self::SPAN {
            return Err(GpuError::DeviceLost {
                what,
                reason: format!(
                    "{} polls over {:.1} s found the queue empty but the readback never arrived",
                    self.polls,
                    since.elapsed().as_secs_f64()
                ),
            });
        }
        Ok(())
    }
}
