//! Buffer helpers: create storage buffers from slices within the device's limits, and read them
//! back to the CPU through a staging buffer.

use crate::context::GpuContext;
use crate::error::GpuError;
use wgpu::util::DeviceExt;

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
    let padded;
    let contents = if bytes.len() < 4 {
        padded = [0u8; 4];
        &padded[..]
    } else {
        bytes
    };
    Ok(ctx
        .device
        .create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some(what),
            contents,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | extra_usage,
        }))
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

/// Fails with [`GpuError::BufferTooLarge`] when `bytes` exceeds the device's storage-binding or
/// buffer-size limit.
pub fn check_size(ctx: &GpuContext, what: &'static str, bytes: u64) -> Result<(), GpuError> {
    let limits = ctx.device.limits();
    let limit = limits
        .max_storage_buffer_binding_size
        .min(limits.max_buffer_size);
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
