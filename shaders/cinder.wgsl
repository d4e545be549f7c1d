// CInDeR (Knott & Pai 2003, section 4.1): orthographic view along -z of a tight frustum.
// Edges ("pass 1" and the counting redraw) pass world z to the fragment stage, which discards
// fragments outside the pair's overlap slab; solids ("passes 2-3") need no fragment stage.

struct View {
    // (centre x, centre y, far z = the largest world z, unused)
    centre: vec4<f32>,
    // (2 / width, 2 / height, 1 / depth range, unused)
    scale: vec4<f32>,
    // (lowest, highest) world z at which edge points are tested, then unused
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
    @location(0) world_z: f32,
};

@vertex
fn vs_edge(@location(0) p: vec3<f32>) -> EdgeOut {
    var out: EdgeOut;
    out.position = project(p);
    out.world_z = p.z;
    return out;
}

@fragment
fn fs_edge(in: EdgeOut) {
    if (in.world_z < view.clip_z.x || in.world_z > view.clip_z.y) {
        discard;
    }
}

@vertex
fn vs_solid(@location(0) p: vec3<f32>) -> @builtin(position) vec4<f32> {
    return project(p);
}
