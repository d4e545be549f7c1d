//! Steps 1–3 of Kitamura et al. 1995 (`kitamura-1995-parallel-colliding-faces.md`, §3.2–§3.4):
//! overlap regions, the faces meeting them, and the memoryless face octree that turns them into
//! candidate face pairs.
//!
//! The octree is never stored: the recursion carries, for the current cell, the faces of both
//! objects whose swept boxes meet it, tests them against the eight octants, and descends only
//! into octants that keep faces of both objects. Leaves (cells at the configured depth) hand
//! their two face lists to a callback; the callers form the cross pairs and deduplicate them.

use super::{
    DBox, FacePair, FaceRef, KitamuraConfig, KitamuraError, MovingMesh, OverlapRegion, check_input,
    overlap_regions,
};

/// The deepest face octree accepted (8^16 potential cells; deeper cells would be far below the
/// resolution at which faces are told apart by their boxes).
pub const MAX_DEPTH: u32 = 16;

/// A face index with its swept box.
pub(crate) type BoxedFace = (u32, DBox);

/// One overlap region with the faces of both objects meeting it (steps 1 and 2).
pub(crate) struct RegionFaces {
    pub(crate) region: OverlapRegion,
    pub(crate) faces_a: Vec<BoxedFace>,
    pub(crate) faces_b: Vec<BoxedFace>,
}

/// Steps 1 and 2: overlap regions that meet faces of both objects, with those faces.
pub(crate) fn regions_with_faces(objects: &[MovingMesh]) -> Vec<RegionFaces> {
    let regions = overlap_regions(objects);
    let mut boxes: Vec<Option<Vec<DBox>>> = vec![None; objects.len()];
    let mut out = Vec::with_capacity(regions.len());
    for region in regions {
        let mut faces = [Vec::new(), Vec::new()];
        for (k, obj) in [region.a, region.b].into_iter().enumerate() {
            let o = &objects[obj as usize];
            let bs = boxes[obj as usize].get_or_insert_with(|| {
                (0..o.face_count())
                    .map(|f| o.face_box(f).unwrap_or(DBox::EMPTY))
                    .collect()
            });
            faces[k] = bs
                .iter()
                .enumerate()
                .filter(|(_, b)| b.overlaps(&region.region))
                .map(|(f, b)| (f as u32, *b))
                .collect();
        }
        let [faces_a, faces_b] = faces;
        if !faces_a.is_empty() && !faces_b.is_empty() {
            out.push(RegionFaces {
                region,
                faces_a,
                faces_b,
            });
        }
    }
    out
}

/// Step 3 on one region: calls `leaf` with the faces of both objects meeting each leaf cell
/// that holds faces of both.
pub(crate) fn for_each_leaf(
    rf: &RegionFaces,
    depth: u32,
    leaf: &mut dyn FnMut(&[BoxedFace], &[BoxedFace]),
) {
    // One pair of face buffers per level, reused by all cells of that level: the recursion
    // allocates nothing after the first descent.
    let mut scratch: Vec<(Vec<BoxedFace>, Vec<BoxedFace>)> =
        (0..depth).map(|_| (Vec::new(), Vec::new())).collect();
    recurse(
        rf.region.region,
        &rf.faces_a,
        &rf.faces_b,
        &mut scratch,
        leaf,
    );
}

/// Visits `cell` holding faces `fa` and `fb`; `scratch` has one buffer pair per level still
/// to descend (none left: `cell` is a leaf).
fn recurse(
    cell: DBox,
    fa: &[BoxedFace],
    fb: &[BoxedFace],
    scratch: &mut [(Vec<BoxedFace>, Vec<BoxedFace>)],
    leaf: &mut dyn FnMut(&[BoxedFace], &[BoxedFace]),
) {
    let Some(((ca, cb), rest)) = scratch.split_first_mut() else {
        leaf(fa, fb);
        return;
    };
    for i in 0..8 {
        let child = cell.octant(i);
        ca.clear();
        ca.extend(fa.iter().filter(|f| f.1.overlaps(&child)).copied());
        if ca.is_empty() {
            continue;
        }
        cb.clear();
        cb.extend(fb.iter().filter(|f| f.1.overlaps(&child)).copied());
        if cb.is_empty() {
            continue;
        }
        recurse(child, ca, cb, rest, leaf);
    }
}

/// The face pair of region `region` for faces `fa` (of `region.a`) and `fb` (of `region.b`).
#[inline]
pub(crate) fn pair(region: &OverlapRegion, fa: u32, fb: u32) -> FacePair {
    FacePair {
        a: FaceRef {
            object: region.a,
            face: fa,
        },
        b: FaceRef {
            object: region.b,
            face: fb,
        },
    }
}

/// Steps 1–3: the distinct candidate face pairs, sorted.
pub fn candidate_pairs(
    objects: &[MovingMesh],
    config: &KitamuraConfig,
) -> Result<Vec<FacePair>, KitamuraError> {
    check_input(objects, config)?;
    let mut out = Vec::new();
    for rf in regions_with_faces(objects) {
        let mut local: Vec<(u32, u32)> = Vec::new();
        for_each_leaf(&rf, config.depth, &mut |fa, fb| {
            for a in fa {
                for b in fb {
                    local.push((a.0, b.0));
                }
            }
        });
        local.sort_unstable();
        local.dedup();
        out.extend(local.into_iter().map(|(a, b)| pair(&rf.region, a, b)));
    }
    out.sort_unstable();
    Ok(out)
}
