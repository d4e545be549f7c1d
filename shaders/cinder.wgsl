// CInDeR (Knott & Pai 2003, sections 4.1, 6.2, 6.3): orthographic view along -z of a tight
// frustum. The host rotates coordinates so that every view direction (z, x, y) is the local -z.
// Edges ("pass 1" and the counting redraw) are offset along their vertex normals (section 6.3)
// by `view.clip_z.z` world units (signed: negative moves edges inward) and pass their world
// position to the fragment stage, which discards fragments outside the pair's overlap slab.
// Solids ("passes 2-3") need no fragment stage, except in the localization pass (section 6.2),
// where every pipeline of the pass has a colour target and only `fs_locate` writes to it.

struct View {
    // (centre x, centre y, far z = the largest world z, unused)
    centre: vec4<f32>,
    // (2 / width, 2 / height, 1 / depth range, unused)
    scale: vec4<f32>,
    // (lowest, highest) world z at which edge points are tested, edge offset (world units, signed),
    // unused
    clip_z: vec4<f32>,
};

@group(0) @binding(0) var<uniform> view: View;

fn project(p: vec3<f32>) -> vec4<f32> {
    let x = (p.x - view.centre.x) * view.scale.x;
    let y = (p.y - view.centre.y) * view.scale.y;
    // The viewer sits at +z looking toward -z: depth grows as z falls, so outward
    // counter-clockwise triangles facing the viewer are front faces.
    let depth = (view.centre.z - p.z) * view.scale.z;
    return vec4<f32>(x, y, depth, 1.0);
}

struct EdgeOut {
    @builtin(position) position: vec4<f32>,
    @location(0) world: vec3<f32>,
};

@vertex
fn vs_edge(@location(0) p: vec3<f32>, @location(1) n: vec3<f32>) -> EdgeOut {
    var out: EdgeOut;
    let q = p + n * view.clip_z.z;
    out.position = project(q);
    out.world = q;
    return out;
}

@fragment
fn fs_edge(in: EdgeOut) {
    if (in.world.z < view.clip_z.x || in.world.z > view.clip_z.y) {
        discard;
    }
}

// Localization (section 6.2): the (rotated) world position of the edge point, alpha 1.
@fragment
fn fs_locate(in: EdgeOut) -> @location(0) vec4<f32> {
    if (in.world.z < view.clip_z.x || in.world.z > view.clip_z.y) {
        discard;
    }
    return vec4<f32>(in.world, 1.0);
}

@vertex
fn vs_solid(@location(0) p: vec3<f32>) -> @builtin(position) vec4<f32> {
    return project(p);
}

// Solid pass inside the localization render pass (its colour writes are masked off).
@fragment
fn fs_solid_masked() -> @location(0) vec4<f32> {
    return vec4<f32>(0.0);
}
