//! Closest features between convex hulls, tracked incrementally (Lin–Canny style).
//!
//! Implements Lin–Manocha 1996 (`lin-manocha-1996-interference-dynamic.md`), section 4.1
//! "Collision Detection between Convex Polytopes":
//!
//! * [`HullFeatures`]: the features (vertices, edges, polygon faces) of a [`ConvexHull`], with
//!   coplanar hull triangles merged into polygons by exact `orient3d`, their adjacency and the
//!   constraint planes bounding each feature's external Voronoi region.
//! * [`ClosestFeatures`]: the feature-pair walk. The closest points of the current pair are
//!   tested against each other's Voronoi regions; a violated constraint plane names the
//!   neighbouring feature to step to. The pair is kept between queries (warm start), so under
//!   small motions a query takes a few steps. A point of one hull falling below a face plane of
//!   the other enters the pseudo-internal Voronoi region: it is tested against every face plane
//!   and reported as [`Proximity::Penetrating`] when inside, otherwise the walk jumps to the face
//!   the point lies furthest above. (The paper's pseudo-internal regions are pyramids from each
//!   face to the centroid; the full containment test used here decides penetration exactly in
//!   place of the pyramid membership, at `O(faces)` cost only when a point is inside a face's
//!   half-space.) Two features that intersect (closest points within the tolerance) are also
//!   reported penetrating. A step limit guards against cycling, after which the query falls
//!   back to [`proximity_brute_force`] (counted in [`WalkStats`]).
//! * [`classify`]: red (on the original model) and green (introduced by the hull) faces.
//!
//! Geometry is in `f64`: A's features in A's frame, B's mapped into A's frame by the relative
//! pose `b_to_a` ([`DPose::transform_point`]). Feature merging is exact; distances and Voronoi
//! tests use a tolerance relative to the hulls' size.

use crate::hull::{ConvexHull, HullError, collinear, orient};
use crate::mesh::TriMesh;
use crate::pose::DPose;
use crate::primitives::closest::{on_segment, segment_segment};
use glam::DVec3;
use std::collections::HashMap;

/// A feature of a convex hull: an index into [`HullFeatures`]' vertices, edges or faces.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Feature {
    /// A vertex.
    Vertex(u32),
    /// An edge.
    Edge(u32),
    /// A (polygon) face.
    Face(u32),
}

/// A constraint plane of a Voronoi region: a point `x` satisfies it when
/// `normal · x >= offset`; a point violating it is closer to `neighbor`'s region.
///
/// For a face, the first plane is the face's own (outward) plane and its `neighbor` is the face
/// itself: violating it enters the face's pseudo-internal Voronoi region.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ConstraintPlane {
    /// Unit normal pointing into the region.
    pub normal: DVec3,
    /// Plane offset.
    pub offset: f64,
    /// The feature on the other side of the plane.
    pub neighbor: Feature,
}

impl ConstraintPlane {
    /// Signed distance of `x` to the plane, positive inside the region.
    #[inline]
    pub fn signed(&self, x: DVec3) -> f64 {
        self.normal.dot(x) - self.offset
    }
}

#[derive(Clone, Debug)]
struct EdgeData {
    /// Endpoints (feature vertex indices); counter-clockwise in `faces[0]`.
    v: [u32; 2],
    faces: [u32; 2],
}

#[derive(Clone, Debug)]
struct FaceData {
    /// Vertices, counter-clockwise seen from outside.
    verts: Vec<u32>,
    /// `edges[i]` joins `verts[i]` and `verts[i + 1]`.
    edges: Vec<u32>,
    normal: DVec3,
    offset: f64,
    triangles: Vec<u32>,
}

/// The features of a convex hull: vertices, edges and polygon faces with adjacency and Voronoi
/// region constraint planes, in the hull's own frame (`f64`).
///
/// Hull vertices that are not corners of the polytope (in the interior of a face or of an edge,
/// which the exact quickhull may keep) are not features.
#[derive(Clone, Debug)]
pub struct HullFeatures {
    points: Vec<DVec3>,
    hull_vertex: Vec<u32>,
    vertex_edges: Vec<Vec<u32>>,
    edges: Vec<EdgeData>,
    faces: Vec<FaceData>,
    /// Constraint planes, indexed by `region_*` ranges.
    planes: Vec<ConstraintPlane>,
    region_v: Vec<(u32, u32)>,
    region_e: Vec<(u32, u32)>,
    region_f: Vec<(u32, u32)>,
    radius: f64,
}

struct Dsu(Vec<u32>);
impl Dsu {
    fn find(&mut self, mut x: u32) -> u32 {
        while self.0[x as usize] != x {
            let p = self.0[self.0[x as usize] as usize];
            self.0[x as usize] = p;
            x = p;
        }
        x
    }
    fn union(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        if a != b {
            self.0[a.max(b) as usize] = a.min(b);
        }
    }
}

impl HullFeatures {
    /// Builds the features of `hull`: merges coplanar neighbouring triangles (exact `orient3d`)
    /// into polygon faces, drops non-corner vertices and computes the Voronoi constraint planes.
    ///
    /// Fails only if the hull's triangles are not a closed convex surface (never for hulls
    /// from [`crate::convex_hull`]).
    pub fn new(hull: &ConvexHull) -> Result<Self, HullError> {
        let hv = hull.vertices();
        let tris = hull.triangles();
        let nt = tris.len();
        let bad = HullError::Inconsistent;
        // Directed edge -> triangle.
        let mut directed: HashMap<(u32, u32), u32> = HashMap::with_capacity(3 * nt);
        for (t, tri) in tris.iter().enumerate() {
            for k in 0..3 {
                if directed
                    .insert((tri[k], tri[(k + 1) % 3]), t as u32)
                    .is_some()
                {
                    return Err(bad("hull has a repeated directed edge"));
                }
            }
        }
        let across = |a: u32, b: u32| directed.get(&(b, a)).copied();
        let mut dsu = Dsu((0..nt as u32).collect());
        for (t, tri) in tris.iter().enumerate() {
            for k in 0..3 {
                let u = across(tri[k], tri[(k + 1) % 3]).ok_or(bad("hull is not closed"))?;
                let opp = tris[u as usize]
                    .iter()
                    .copied()
                    .find(|&w| w != tri[k] && w != tri[(k + 1) % 3])
                    .ok_or(bad("degenerate hull triangle"))?;
                let [a, b, c] = tri.map(|i| hv[i as usize]);
                if orient(a, b, c, hv[opp as usize]) == 0.0 {
                    dsu.union(t as u32, u);
                }
            }
        }
        // Groups -> face ids.
        let mut group_of = vec![0u32; nt];
        let mut face_id: HashMap<u32, u32> = HashMap::new();
        for (t, g) in group_of.iter_mut().enumerate() {
            let root = dsu.find(t as u32);
            let n = face_id.len() as u32;
            *g = *face_id.entry(root).or_insert(n);
        }
        let nf = face_id.len();
        // Distinct faces around each hull vertex.
        let mut vfaces: Vec<Vec<u32>> = vec![Vec::new(); hv.len()];
        for (t, tri) in tris.iter().enumerate() {
            for &v in tri {
                let list = &mut vfaces[v as usize];
                if !list.contains(&group_of[t]) {
                    list.push(group_of[t]);
                }
            }
        }
        let mut feature_vertex = vec![u32::MAX; hv.len()];
        let mut hull_vertex = Vec::new();
        for (v, fs) in vfaces.iter().enumerate() {
            if fs.len() >= 3 {
                feature_vertex[v] = hull_vertex.len() as u32;
                hull_vertex.push(v as u32);
            }
        }
        let points: Vec<DVec3> = hull_vertex
            .iter()
            .map(|&v| hv[v as usize].as_dvec3())
            .collect();
        // Boundary half-edges per face: start -> (end, face across).
        let mut boundary: Vec<HashMap<u32, (u32, u32)>> = vec![HashMap::new(); nf];
        let mut face_tris: Vec<Vec<u32>> = vec![Vec::new(); nf];
        let mut area_normal = vec![DVec3::ZERO; nf];
        for (t, tri) in tris.iter().enumerate() {
            let g = group_of[t];
            face_tris[g as usize].push(t as u32);
            let [a, b, c] = tri.map(|i| hv[i as usize].as_dvec3());
            area_normal[g as usize] += (b - a).cross(c - a);
            for k in 0..3 {
                let (a, b) = (tri[k], tri[(k + 1) % 3]);
                let u = across(a, b).ok_or(bad("hull is not closed"))?;
                let h = group_of[u as usize];
                if h != g && boundary[g as usize].insert(a, (b, h)).is_some() {
                    return Err(bad("face boundary is not a simple loop"));
                }
            }
        }
        let mut edges: Vec<EdgeData> = Vec::new();
        let mut edge_key: HashMap<(u32, u32), u32> = HashMap::new();
        let mut faces: Vec<FaceData> = Vec::with_capacity(nf);
        for (g, bnd) in boundary.iter().enumerate() {
            let start = *bnd
                .keys()
                .filter(|&&v| feature_vertex[v as usize] != u32::MAX)
                .min()
                .ok_or(bad("face without corners"))?;
            // Walk the loop, keeping corners; remember the face across each corner's out-edge.
            let mut corners: Vec<(u32, u32)> = Vec::new();
            let mut cur = start;
            for _ in 0..=bnd.len() {
                let &(next, h) = bnd.get(&cur).ok_or(bad("open face boundary"))?;
                if feature_vertex[cur as usize] != u32::MAX {
                    corners.push((feature_vertex[cur as usize], h));
                }
                cur = next;
                if cur == start {
                    break;
                }
            }
            if cur != start || corners.len() < 3 {
                return Err(bad("face boundary is not a simple loop"));
            }
            let m = corners.len();
            let mut fedges = Vec::with_capacity(m);
            for i in 0..m {
                let (u, h) = corners[i];
                let v = corners[(i + 1) % m].0;
                let key = (u.min(v), u.max(v));
                let id = match edge_key.get(&key) {
                    Some(&id) => {
                        let e = &mut edges[id as usize];
                        if e.v != [v, u] || e.faces[1] != g as u32 || e.faces[0] != h {
                            return Err(bad("inconsistent edge"));
                        }
                        id
                    }
                    None => {
                        edges.push(EdgeData {
                            v: [u, v],
                            faces: [g as u32, h],
                        });
                        edge_key.insert(key, edges.len() as u32 - 1);
                        edges.len() as u32 - 1
                    }
                };
                fedges.push(id);
            }
            let normal = area_normal[g].normalize();
            let verts: Vec<u32> = corners.iter().map(|c| c.0).collect();
            let offset = verts
                .iter()
                .map(|&v| normal.dot(points[v as usize]))
                .sum::<f64>()
                / m as f64;
            faces.push(FaceData {
                verts,
                edges: fedges,
                normal,
                offset,
                triangles: std::mem::take(&mut face_tris[g]),
            });
        }
        let mut seen = vec![0u8; edges.len()];
        for f in &faces {
            for &e in &f.edges {
                seen[e as usize] += 1;
            }
        }
        if seen.iter().any(|&s| s != 2) {
            return Err(bad("edge not shared by exactly two faces"));
        }
        let mut vertex_edges = vec![Vec::new(); points.len()];
        for (i, e) in edges.iter().enumerate() {
            vertex_edges[e.v[0] as usize].push(i as u32);
            vertex_edges[e.v[1] as usize].push(i as u32);
        }
        let radius = points
            .iter()
            .map(|p| p.abs().max_element())
            .fold(0.0, f64::max);
        let mut s = Self {
            points,
            hull_vertex,
            vertex_edges,
            edges,
            faces,
            planes: Vec::new(),
            region_v: Vec::new(),
            region_e: Vec::new(),
            region_f: Vec::new(),
            radius,
        };
        s.build_regions();
        Ok(s)
    }

    fn build_regions(&mut self) {
        let plane = |normal: DVec3, at: DVec3, neighbor| {
            let normal = normal.normalize_or_zero();
            ConstraintPlane {
                normal,
                offset: normal.dot(at),
                neighbor,
            }
        };
        let mut planes = Vec::new();
        for (v, inc) in self.vertex_edges.iter().enumerate() {
            let start = planes.len() as u32;
            let p = self.points[v];
            for &e in inc {
                let [a, b] = self.edges[e as usize].v;
                let w = if a as usize == v { b } else { a };
                planes.push(plane(p - self.points[w as usize], p, Feature::Edge(e)));
            }
            self.region_v.push((start, planes.len() as u32));
        }
        for e in &self.edges {
            let start = planes.len() as u32;
            let (a, b) = (self.points[e.v[0] as usize], self.points[e.v[1] as usize]);
            let t = b - a;
            planes.push(plane(t, a, Feature::Vertex(e.v[0])));
            planes.push(plane(-t, b, Feature::Vertex(e.v[1])));
            let n0 = self.faces[e.faces[0] as usize].normal;
            let n1 = self.faces[e.faces[1] as usize].normal;
            planes.push(plane(-n0.cross(t), a, Feature::Face(e.faces[0])));
            planes.push(plane(n1.cross(t), a, Feature::Face(e.faces[1])));
            self.region_e.push((start, planes.len() as u32));
        }
        for (fi, f) in self.faces.iter().enumerate() {
            let start = planes.len() as u32;
            planes.push(ConstraintPlane {
                normal: f.normal,
                offset: f.offset,
                neighbor: Feature::Face(fi as u32),
            });
            let m = f.verts.len();
            for i in 0..m {
                let u = self.points[f.verts[i] as usize];
                let v = self.points[f.verts[(i + 1) % m] as usize];
                planes.push(plane(f.normal.cross(v - u), u, Feature::Edge(f.edges[i])));
            }
            self.region_f.push((start, planes.len() as u32));
        }
        self.planes = planes;
    }

    /// Number of vertex features (corners).
    pub fn vertex_count(&self) -> usize {
        self.points.len()
    }

    /// Number of edges.
    pub fn edge_count(&self) -> usize {
        self.edges.len()
    }

    /// Number of polygon faces.
    pub fn face_count(&self) -> usize {
        self.faces.len()
    }

    /// Position of vertex `v` (hull frame, `f64`).
    pub fn vertex(&self, v: u32) -> DVec3 {
        self.points[v as usize]
    }

    /// The index in [`ConvexHull::vertices`] of vertex feature `v`.
    pub fn hull_vertex(&self, v: u32) -> u32 {
        self.hull_vertex[v as usize]
    }

    /// The edges incident to vertex `v`.
    pub fn vertex_edges(&self, v: u32) -> &[u32] {
        &self.vertex_edges[v as usize]
    }

    /// Endpoints of edge `e`, counter-clockwise in its first face.
    pub fn edge_vertices(&self, e: u32) -> [u32; 2] {
        self.edges[e as usize].v
    }

    /// The two faces of edge `e` (in the first one the edge runs from its first to its second
    /// endpoint counter-clockwise).
    pub fn edge_faces(&self, e: u32) -> [u32; 2] {
        self.edges[e as usize].faces
    }

    /// The vertices of face `f`, counter-clockwise seen from outside.
    pub fn face_vertices(&self, f: u32) -> &[u32] {
        &self.faces[f as usize].verts
    }

    /// The boundary edges of face `f`: entry `i` joins vertices `i` and `i + 1`.
    pub fn face_edges(&self, f: u32) -> &[u32] {
        &self.faces[f as usize].edges
    }

    /// The outward unit normal and offset of face `f`'s plane (`normal · x = offset`).
    pub fn face_plane(&self, f: u32) -> (DVec3, f64) {
        let f = &self.faces[f as usize];
        (f.normal, f.offset)
    }

    /// The hull triangles ([`ConvexHull::triangles`] indices) merged into face `f`.
    pub fn face_triangles(&self, f: u32) -> &[u32] {
        &self.faces[f as usize].triangles
    }

    /// The constraint planes bounding `feature`'s external Voronoi region (see
    /// [`ConstraintPlane`]). Vertex: one plane per incident edge, perpendicular to it. Edge: the
    /// two planes perpendicular to it at its endpoints and the two planes through it
    /// perpendicular to its faces. Face: its own plane, then one side plane per boundary edge.
    pub fn voronoi_region(&self, feature: Feature) -> &[ConstraintPlane] {
        let (s, e) = match feature {
            Feature::Vertex(i) => self.region_v[i as usize],
            Feature::Edge(i) => self.region_e[i as usize],
            Feature::Face(i) => self.region_f[i as usize],
        };
        &self.planes[s as usize..e as usize]
    }

    /// Largest absolute vertex coordinate (the scale for tolerances).
    pub fn radius(&self) -> f64 {
        self.radius
    }

    /// The corners of `feature`, mapped by `pose`.
    fn geometry(&self, feature: Feature, pose: &DPose) -> Geo {
        let map = |v: u32| pose.transform_dpoint(self.points[v as usize]);
        match feature {
            Feature::Vertex(v) => Geo {
                pts: vec![map(v)],
                normal: DVec3::ZERO,
            },
            Feature::Edge(e) => Geo {
                pts: self.edges[e as usize].v.iter().map(|&v| map(v)).collect(),
                normal: DVec3::ZERO,
            },
            Feature::Face(f) => Geo {
                pts: self.faces[f as usize]
                    .verts
                    .iter()
                    .map(|&v| map(v))
                    .collect(),
                normal: pose.transform_vector(self.faces[f as usize].normal),
            },
        }
    }

    /// Whether `x` (hull frame) lies in every face's closed half-space (up to `tol`), and the
    /// face whose plane `x` is furthest above.
    fn deepest_face(&self, x: DVec3, tol: f64) -> (bool, u32) {
        let mut best = (f64::NEG_INFINITY, 0u32);
        for (i, f) in self.faces.iter().enumerate() {
            let s = f.normal.dot(x) - f.offset;
            if s > best.0 {
                best = (s, i as u32);
            }
        }
        (best.0 <= tol, best.1)
    }
}

/// A feature's corners in some frame (one point, a segment, or a counter-clockwise polygon with
/// its unit normal).
struct Geo {
    pts: Vec<DVec3>,
    normal: DVec3,
}

impl Geo {
    fn edges(&self) -> impl Iterator<Item = (DVec3, DVec3)> + '_ {
        let n = self.pts.len();
        let count = match n {
            1 => 0,
            2 => 1,
            _ => n,
        };
        (0..count).map(move |i| (self.pts[i], self.pts[(i + 1) % n]))
    }

    fn is_face(&self) -> bool {
        self.pts.len() >= 3
    }

    /// Whether `x`, assumed in the polygon's plane, is inside the polygon (closed).
    fn polygon_contains(&self, x: DVec3) -> bool {
        self.edges()
            .all(|(u, v)| (v - u).cross(x - u).dot(self.normal) >= 0.0)
    }

    fn closest_point(&self, x: DVec3) -> DVec3 {
        match self.pts.len() {
            1 => self.pts[0],
            2 => on_segment(x, self.pts[0], self.pts[1]),
            _ => {
                let proj = x - self.normal * self.normal.dot(x - self.pts[0]);
                if self.polygon_contains(proj) {
                    return proj;
                }
                let mut best = (f64::INFINITY, proj);
                for (u, v) in self.edges() {
                    let c = on_segment(x, u, v);
                    let d = c.distance_squared(x);
                    if d < best.0 {
                        best = (d, c);
                    }
                }
                best.1
            }
        }
    }

    /// A point where segment `p, q` crosses this face's polygon, if it crosses the plane.
    fn segment_crossing(&self, p: DVec3, q: DVec3) -> Option<DVec3> {
        let dp = self.normal.dot(p - self.pts[0]);
        let dq = self.normal.dot(q - self.pts[0]);
        if (dp > 0.0 && dq > 0.0) || (dp < 0.0 && dq < 0.0) || dp == dq {
            return None;
        }
        let x = p + (q - p) * (dp / (dp - dq));
        self.polygon_contains(x).then_some(x)
    }
}

/// Closest points `(on x, on y)` of two features' geometries (intersecting ones give a common
/// point twice).
fn closest_points(x: &Geo, y: &Geo) -> (DVec3, DVec3) {
    if x.is_face() {
        for (p, q) in y.edges() {
            if let Some(c) = x.segment_crossing(p, q) {
                return (c, c);
            }
        }
    }
    if y.is_face() {
        for (p, q) in x.edges() {
            if let Some(c) = y.segment_crossing(p, q) {
                return (c, c);
            }
        }
    }
    let mut best = (f64::INFINITY, DVec3::ZERO, DVec3::ZERO);
    let mut offer = |p: DVec3, q: DVec3| {
        let d = p.distance_squared(q);
        if d < best.0 {
            best = (d, p, q);
        }
    };
    for &p in &x.pts {
        offer(p, y.closest_point(p));
    }
    for &q in &y.pts {
        offer(x.closest_point(q), q);
    }
    for (p0, p1) in x.edges() {
        for (q0, q1) in y.edges() {
            let (p, q) = segment_segment(p0, p1, q0, q1);
            offer(p, q);
        }
    }
    (best.1, best.2)
}

/// The result of a proximity query between two convex hulls.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Proximity {
    /// The hulls are disjoint.
    Separated {
        /// Distance between the hulls.
        distance: f64,
        /// Closest point on A (A's frame).
        point_a: DVec3,
        /// Closest point on B (A's frame).
        point_b: DVec3,
        /// The closest feature pair (of A, of B).
        features: (Feature, Feature),
    },
    /// The hulls intersect (touching, up to the tolerance, included).
    Penetrating {
        /// The feature pair at which the penetration was found.
        features: (Feature, Feature),
    },
}

impl Proximity {
    /// The distance, zero when penetrating.
    pub fn distance(&self) -> f64 {
        match self {
            Proximity::Separated { distance, .. } => *distance,
            Proximity::Penetrating { .. } => 0.0,
        }
    }

    /// Whether the hulls intersect.
    pub fn is_penetrating(&self) -> bool {
        matches!(self, Proximity::Penetrating { .. })
    }
}

/// Counters of a [`ClosestFeatures`] tracker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WalkStats {
    /// Queries answered.
    pub queries: u64,
    /// Feature-pair steps taken over all queries.
    pub steps: u64,
    /// Steps taken by the latest query.
    pub last_steps: u32,
    /// Queries that hit the step limit and fell back to [`proximity_brute_force`].
    pub fallbacks: u64,
}

impl WalkStats {
    /// Mean steps per query.
    pub fn mean_steps(&self) -> f64 {
        if self.queries == 0 {
            0.0
        } else {
            self.steps as f64 / self.queries as f64
        }
    }
}

/// Incremental closest-feature tracker for one pair of hulls (Lin–Canny walk with warm start).
#[derive(Clone, Debug, Default)]
pub struct ClosestFeatures {
    pair: Option<(Feature, Feature)>,
    step_limit: Option<u32>,
    /// Counters.
    pub stats: WalkStats,
}

enum Step {
    Done(DVec3, DVec3),
    Penetrating,
    Move(Feature, Feature),
}

/// Tolerance for a pair of hulls under `b_to_a`.
fn tolerance(a: &HullFeatures, b: &HullFeatures, b_to_a: &DPose) -> f64 {
    1e-12 * (a.radius + b.radius + b_to_a.translation.abs().max_element()).max(f64::MIN_POSITIVE)
}

/// Outcome of testing a point against a feature's region.
enum Check {
    Inside,
    Move(Feature),
    /// Below the face's own plane: the pseudo-internal region.
    Below,
}

fn check_region(h: &HullFeatures, f: Feature, x: DVec3, tol: f64) -> Check {
    let planes = h.voronoi_region(f);
    let (own, sides) = match f {
        Feature::Face(_) => (Some(&planes[0]), &planes[1..]),
        _ => (None, planes),
    };
    let mut worst = (-tol, None);
    for p in sides {
        let s = p.signed(x);
        if s < worst.0 {
            worst = (s, Some(p.neighbor));
        }
    }
    if let Some(n) = worst.1 {
        return Check::Move(n);
    }
    match own {
        Some(p) if p.signed(x) < -tol => Check::Below,
        _ => Check::Inside,
    }
}

/// One step of the walk for the pair `(fa, fb)`: done, penetrating, or the next pair.
fn step(
    a: &HullFeatures,
    b: &HullFeatures,
    b_to_a: &DPose,
    a_to_b: &DPose,
    (fa, fb): (Feature, Feature),
    tol: f64,
) -> Step {
    let ga = a.geometry(fa, &DPose::IDENTITY);
    let gb = b.geometry(fb, b_to_a);
    let (p, q) = closest_points(&ga, &gb);
    if p.distance(q) <= tol {
        return Step::Penetrating;
    }
    // q (on B) against A's region of fa.
    match check_region(a, fa, q, tol) {
        Check::Inside => {}
        Check::Move(n) => return Step::Move(n, fb),
        Check::Below => return below(a, fb, q, tol),
    }
    // p (on A) against B's region of fb, in B's frame.
    let pb = a_to_b.transform_dpoint(p);
    match check_region(b, fb, pb, tol) {
        Check::Inside => Step::Done(p, q),
        Check::Move(n) => Step::Move(fa, n),
        Check::Below => match below(b, fa, pb, tol) {
            Step::Move(x, y) => Step::Move(y, x),
            s => s,
        },
    }
}

/// Pseudo-internal region handling: point `x` of `other` (a feature of the other hull, in
/// `h`'s frame) lies below a face plane of `h`. If `x` is below every face plane it is a point
/// of the other hull inside `h`: penetration. Otherwise the walk jumps to the face of `h` that
/// `x` lies furthest above (keeping `other`). Returns the next pair as
/// `(feature of h, feature of other)`.
fn below(h: &HullFeatures, other: Feature, x: DVec3, tol: f64) -> Step {
    let (inside, deepest) = h.deepest_face(x, tol);
    if inside {
        Step::Penetrating
    } else {
        Step::Move(Feature::Face(deepest), other)
    }
}

impl ClosestFeatures {
    /// A tracker with no remembered pair (the first query starts cold).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the step limit after which a query falls back to brute force (default:
    /// `32 + ` the larger hull's feature count).
    pub fn with_step_limit(mut self, limit: u32) -> Self {
        self.step_limit = Some(limit);
        self
    }

    /// The remembered feature pair (the warm start of the next query).
    pub fn pair(&self) -> Option<(Feature, Feature)> {
        self.pair
    }

    /// Forgets the remembered pair: the next query starts cold.
    pub fn reset(&mut self) {
        self.pair = None;
    }

    /// The proximity of hulls `a` and `b`, B placed in A's frame by `b_to_a`, walking from the
    /// previous query's pair (or from the first vertices).
    pub fn query(&mut self, a: &HullFeatures, b: &HullFeatures, b_to_a: &DPose) -> Proximity {
        self.stats.queries += 1;
        let a_to_b = b_to_a.inverse();
        let tol = tolerance(a, b, b_to_a);
        let size = |h: &HullFeatures| h.vertex_count() + h.edge_count() + h.face_count();
        let limit = self.step_limit.unwrap_or(32 + size(a).max(size(b)) as u32);
        let valid = |f: Feature, h: &HullFeatures| match f {
            Feature::Vertex(i) => (i as usize) < h.vertex_count(),
            Feature::Edge(i) => (i as usize) < h.edge_count(),
            Feature::Face(i) => (i as usize) < h.face_count(),
        };
        let mut pair = match self.pair {
            Some((fa, fb)) if valid(fa, a) && valid(fb, b) => (fa, fb),
            _ => (Feature::Vertex(0), Feature::Vertex(0)),
        };
        let mut steps = 0u32;
        let result = loop {
            if steps >= limit {
                self.stats.fallbacks += 1;
                let r = proximity_brute_force(a, b, b_to_a);
                let (Proximity::Separated { features, .. } | Proximity::Penetrating { features }) =
                    r;
                pair = features;
                break r;
            }
            match step(a, b, b_to_a, &a_to_b, pair, tol) {
                Step::Done(p, q) => {
                    break Proximity::Separated {
                        distance: p.distance(q),
                        point_a: p,
                        point_b: q,
                        features: pair,
                    };
                }
                Step::Penetrating => break Proximity::Penetrating { features: pair },
                Step::Move(fa, fb) => {
                    pair = (fa, fb);
                    steps += 1;
                }
            }
        };
        self.pair = Some(pair);
        self.stats.steps += steps as u64;
        self.stats.last_steps = steps;
        result
    }
}

/// The proximity of hulls `a` and `b` (B in A's frame by `b_to_a`) by testing every feature
/// pair: penetration when a vertex of one lies inside the other or an edge of one crosses a face
/// of the other; otherwise the minimum over vertex–face and edge–edge pairs. `O(n·m)`; the
/// fallback of [`ClosestFeatures::query`].
pub fn proximity_brute_force(a: &HullFeatures, b: &HullFeatures, b_to_a: &DPose) -> Proximity {
    let tol = tolerance(a, b, b_to_a);
    let a_to_b = b_to_a.inverse();
    for v in 0..b.vertex_count() as u32 {
        if a.deepest_face(b_to_a.transform_dpoint(b.vertex(v)), 0.0).0 {
            return Proximity::Penetrating {
                features: (Feature::Vertex(0), Feature::Vertex(v)),
            };
        }
    }
    for v in 0..a.vertex_count() as u32 {
        if b.deepest_face(a_to_b.transform_dpoint(a.vertex(v)), 0.0).0 {
            return Proximity::Penetrating {
                features: (Feature::Vertex(v), Feature::Vertex(0)),
            };
        }
    }
    let ga: Vec<Geo> = (0..a.face_count() as u32)
        .map(|f| a.geometry(Feature::Face(f), &DPose::IDENTITY))
        .collect();
    let gb: Vec<Geo> = (0..b.face_count() as u32)
        .map(|f| b.geometry(Feature::Face(f), b_to_a))
        .collect();
    let ea: Vec<Geo> = (0..a.edge_count() as u32)
        .map(|e| a.geometry(Feature::Edge(e), &DPose::IDENTITY))
        .collect();
    let eb: Vec<Geo> = (0..b.edge_count() as u32)
        .map(|e| b.geometry(Feature::Edge(e), b_to_a))
        .collect();
    let mut best = (
        f64::INFINITY,
        DVec3::ZERO,
        DVec3::ZERO,
        (Feature::Vertex(0), Feature::Vertex(0)),
    );
    let mut offer = |p: DVec3, q: DVec3, fs: (Feature, Feature)| {
        let d = p.distance(q);
        if d < best.0 {
            best = (d, p, q, fs);
        }
    };
    for (i, e) in ea.iter().enumerate() {
        for (j, f) in gb.iter().enumerate() {
            let (p, q) = closest_points(e, f);
            offer(p, q, (Feature::Edge(i as u32), Feature::Face(j as u32)));
        }
    }
    for (j, e) in eb.iter().enumerate() {
        for (i, f) in ga.iter().enumerate() {
            let (p, q) = closest_points(f, e);
            offer(p, q, (Feature::Face(i as u32), Feature::Edge(j as u32)));
        }
    }
    for (i, x) in ea.iter().enumerate() {
        for (j, y) in eb.iter().enumerate() {
            let (p, q) = segment_segment(x.pts[0], x.pts[1], y.pts[0], y.pts[1]);
            offer(p, q, (Feature::Edge(i as u32), Feature::Edge(j as u32)));
        }
    }
    let (distance, point_a, point_b, features) = best;
    if distance <= tol {
        Proximity::Penetrating { features }
    } else {
        Proximity::Separated {
            distance,
            point_a,
            point_b,
            features,
        }
    }
}

/// Whether a hull face lies on the original model (red) or was introduced by the hull (green).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FeatureColor {
    /// The face is covered by outward-facing triangles of the original mesh.
    Red,
    /// The face is (at least partly) virtual: it spans a concavity or hole of the mesh.
    Green,
}

/// Colours each face of `features` (the hull of `mesh`'s vertices): red when the mesh triangles
/// lying exactly in the face's plane (exact `orient3d` against three face corners) and facing
/// the same way cover the face's area (to a relative `1e-9`), green otherwise.
pub fn classify(mesh: &TriMesh, features: &HullFeatures) -> Vec<FeatureColor> {
    let mv = mesh.vertices();
    (0..features.face_count() as u32)
        .map(|f| {
            let verts = features.face_vertices(f);
            let pts: Vec<DVec3> = verts.iter().map(|&v| features.vertex(v)).collect();
            let (normal, _) = features.face_plane(f);
            let area: f64 = (1..pts.len() - 1)
                .map(|i| (pts[i] - pts[0]).cross(pts[i + 1] - pts[0]).length() * 0.5)
                .sum();
            // Three non-collinear corners span the plane: corners 0, 1 and the one furthest
            // from the line through them.
            let c = (2..pts.len())
                .max_by(|&i, &j| {
                    let ai = (pts[1] - pts[0]).cross(pts[i] - pts[0]).length_squared();
                    let aj = (pts[1] - pts[0]).cross(pts[j] - pts[0]).length_squared();
                    ai.total_cmp(&aj)
                })
                .unwrap_or(2);
            let (p0, p1, p2) = (pts[0].as_vec3(), pts[1].as_vec3(), pts[c].as_vec3());
            let covered: f64 = mesh
                .triangles()
                .iter()
                .filter(|t| t.iter().all(|&i| orient(p0, p1, p2, mv[i as usize]) == 0.0))
                .map(|t| {
                    let [a, b, c] = t.map(|i| mv[i as usize].as_dvec3());
                    let n = (b - a).cross(c - a);
                    if n.dot(normal) > 0.0 {
                        n.length() * 0.5
                    } else {
                        0.0
                    }
                })
                .sum();
            if covered >= area * (1.0 - 1e-9) {
                FeatureColor::Red
            } else {
                FeatureColor::Green
            }
        })
        .collect()
}

/// Colours each edge of `features` (the hull of `mesh`'s vertices): red when the mesh edges
/// lying exactly on the edge's line (exact collinearity of both endpoints with the edge's
/// corners) cover its length (to a relative `1e-9`), green when the edge bridges a concavity
/// or a gap of the mesh.
pub fn classify_edges(mesh: &TriMesh, features: &HullFeatures) -> Vec<FeatureColor> {
    let mv = mesh.vertices();
    let mut mesh_edges: Vec<(u32, u32)> = mesh
        .triangles()
        .iter()
        .flat_map(|t| (0..3).map(move |k| (t[k].min(t[(k + 1) % 3]), t[k].max(t[(k + 1) % 3]))))
        .collect();
    mesh_edges.sort_unstable();
    mesh_edges.dedup();
    (0..features.edge_count() as u32)
        .map(|e| {
            let [a, b] = features.edge_vertices(e).map(|v| features.vertex(v));
            let (a32, b32) = (a.as_vec3(), b.as_vec3());
            let covered: f64 = mesh_edges
                .iter()
                .filter(|&&(p, q)| {
                    collinear(a32, b32, mv[p as usize]) && collinear(a32, b32, mv[q as usize])
                })
                .map(|&(p, q)| {
                    mv[p as usize]
                        .as_dvec3()
                        .distance(mv[q as usize].as_dvec3())
                })
                .sum();
            if covered >= a.distance(b) * (1.0 - 1e-9) {
                FeatureColor::Red
            } else {
                FeatureColor::Green
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hull::{Hull, convex_hull};
    use crate::shapes;
    use crate::tri_tri::{orient3d_sign, triangles_intersect};
    use glam::{DMat3, Vec3};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    type Shape = (ConvexHull, HullFeatures);

    fn hull_of(points: &[Vec3]) -> Shape {
        let Ok(Hull::Solid(h)) = convex_hull(points) else {
            panic!("test points must span a volume");
        };
        let f = HullFeatures::new(&h).expect("features of a valid hull");
        (h, f)
    }

    fn random_points(rng: &mut ChaCha8Rng, n: usize, scale: f32) -> Vec<Vec3> {
        (0..n)
            .map(|_| {
                Vec3::new(
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                    rng.random_range(-1.0..1.0),
                ) * scale
            })
            .collect()
    }

    fn random_rotation(rng: &mut ChaCha8Rng) -> DMat3 {
        let axis = DVec3::new(
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
            rng.random_range(-1.0..1.0),
        )
        .normalize_or(DVec3::X);
        DMat3::from_axis_angle(axis, rng.random_range(0.0..std::f64::consts::TAU))
    }

    fn random_pose(rng: &mut ChaCha8Rng, reach: f64) -> DPose {
        DPose {
            rotation: random_rotation(rng),
            translation: DVec3::new(
                rng.random_range(-reach..reach),
                rng.random_range(-reach..reach),
                rng.random_range(-reach..reach),
            ),
        }
    }

    // ---------- independent oracle on hull triangles ----------

    /// Closest point on triangle (barycentric region tests; Ericson 5.1.5).
    fn closest_on_triangle(p: DVec3, a: DVec3, b: DVec3, c: DVec3) -> DVec3 {
        let (ab, ac, ap) = (b - a, c - a, p - a);
        let (d1, d2) = (ab.dot(ap), ac.dot(ap));
        if d1 <= 0.0 && d2 <= 0.0 {
            return a;
        }
        let bp = p - b;
        let (d3, d4) = (ab.dot(bp), ac.dot(bp));
        if d3 >= 0.0 && d4 <= d3 {
            return b;
        }
        let vc = d1 * d4 - d3 * d2;
        if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
            return a + ab * (d1 / (d1 - d3));
        }
        let cp = p - c;
        let (d5, d6) = (ab.dot(cp), ac.dot(cp));
        if d6 >= 0.0 && d5 <= d6 {
            return c;
        }
        let vb = d5 * d2 - d1 * d6;
        if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
            return a + ac * (d2 / (d2 - d6));
        }
        let va = d3 * d6 - d5 * d4;
        if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
            return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
        }
        let denom = 1.0 / (va + vb + vc);
        a + ab * (vb * denom) + ac * (vc * denom)
    }

    fn point_segment_distance(p: DVec3, a: DVec3, b: DVec3) -> f64 {
        let d = b - a;
        let t = ((p - a).dot(d) / d.length_squared()).clamp(0.0, 1.0);
        (a + d * t).distance(p)
    }

    /// Segment distance: the four endpoint distances, or the common perpendicular when its
    /// feet fall inside both segments.
    fn segment_distance(p0: DVec3, p1: DVec3, q0: DVec3, q1: DVec3) -> f64 {
        let mut best = point_segment_distance(p0, q0, q1)
            .min(point_segment_distance(p1, q0, q1))
            .min(point_segment_distance(q0, p0, p1))
            .min(point_segment_distance(q1, p0, p1));
        let (u, v, w) = (p1 - p0, q1 - q0, p0 - q0);
        let (a, b, c, d, e) = (u.dot(u), u.dot(v), v.dot(v), u.dot(w), v.dot(w));
        let den = a * c - b * b;
        if den > 1e-18 * a * c {
            let s = (b * e - c * d) / den;
            let t = (a * e - b * d) / den;
            if (0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&t) {
                best = best.min((p0 + u * s).distance(q0 + v * t));
            }
        }
        best
    }

    fn tris(h: &ConvexHull, pose: &DPose) -> Vec<[DVec3; 3]> {
        (0..h.triangles().len())
            .map(|t| h.triangle(t).map(|v| pose.transform_point(v)))
            .collect()
    }

    fn inside(p: DVec3, tris: &[[DVec3; 3]]) -> bool {
        tris.iter().all(|t| orient3d_sign(t[0], t[1], t[2], p) >= 0)
    }

    /// (intersect, distance) of two hulls, from their triangles only.
    fn oracle(a: &ConvexHull, b: &ConvexHull, b_to_a: &DPose) -> (bool, f64) {
        let ta = tris(a, &DPose::IDENTITY);
        let tb = tris(b, b_to_a);
        let intersect = ta
            .iter()
            .any(|x| tb.iter().any(|y| triangles_intersect(*x, *y)))
            || inside(tb[0][0], &ta)
            || inside(ta[0][0], &tb);
        let mut d = f64::INFINITY;
        for (x, y) in [(&ta, &tb), (&tb, &ta)] {
            for t in x.iter() {
                for &p in t {
                    for u in y.iter() {
                        d = d.min(p.distance(closest_on_triangle(p, u[0], u[1], u[2])));
                    }
                }
            }
        }
        for x in &ta {
            for y in &tb {
                for i in 0..3 {
                    for j in 0..3 {
                        d = d.min(segment_distance(x[i], x[(i + 1) % 3], y[j], y[(j + 1) % 3]));
                    }
                }
            }
        }
        (intersect, d)
    }

    fn max_plane_excess(h: &HullFeatures, x: DVec3) -> f64 {
        (0..h.face_count() as u32)
            .map(|f| {
                let (n, d) = h.face_plane(f);
                n.dot(x) - d
            })
            .fold(f64::NEG_INFINITY, f64::max)
    }

    /// Checks `r` against the oracle; returns whether it was penetrating.
    fn check(
        r: &Proximity,
        a: (&ConvexHull, &HullFeatures),
        b: (&ConvexHull, &HullFeatures),
        pose: &DPose,
        what: &str,
    ) -> bool {
        let (hit, dist) = oracle(a.0, b.0, pose);
        assert_eq!(
            r.is_penetrating(),
            hit,
            "{what}: penetration {r:?}, oracle {hit} {dist}"
        );
        if let Proximity::Separated {
            distance,
            point_a,
            point_b,
            ..
        } = *r
        {
            let scale = 1.0 + a.1.radius() + b.1.radius() + pose.translation.length();
            assert!(
                (distance - dist).abs() <= 1e-6 * scale,
                "{what}: distance {distance} vs oracle {dist}"
            );
            assert!((point_a.distance(point_b) - distance).abs() <= 1e-9 * scale);
            assert!(
                max_plane_excess(a.1, point_a) <= 1e-9 * scale,
                "{what}: point_a off A"
            );
            let pb = pose.inverse().transform_dpoint(point_b);
            assert!(
                max_plane_excess(b.1, pb) <= 1e-9 * scale,
                "{what}: point_b off B"
            );
        }
        hit
    }

    fn shape_pool(rng: &mut ChaCha8Rng) -> Vec<(ConvexHull, HullFeatures)> {
        let mut pool = Vec::new();
        for n in [4, 8, 20, 40] {
            pool.push(hull_of(&random_points(rng, n, 1.0)));
        }
        pool.push(hull_of(
            shapes::cuboid(Vec3::new(1.0, 0.5, 0.25))
                .unwrap()
                .vertices(),
        ));
        pool.push(hull_of(
            shapes::cuboid(Vec3::splat(0.7)).unwrap().vertices(),
        ));
        pool.push(hull_of(shapes::icosphere(0.9, 1).unwrap().vertices()));
        pool.push(hull_of(shapes::cylinder(0.6, 0.8, 12).unwrap().vertices()));
        pool
    }

    /// Structural checks of the features of `hull`.
    fn assert_consistent(hull: &ConvexHull, h: &HullFeatures) {
        let (v, e, f) = (h.vertex_count(), h.edge_count(), h.face_count());
        assert_eq!(v as i64 - e as i64 + f as i64, 2, "Euler");
        for fi in 0..f as u32 {
            let (n, d) = h.face_plane(fi);
            for v in 0..v as u32 {
                assert!(n.dot(h.vertex(v)) - d <= 1e-12, "convex");
            }
            for &v in h.face_vertices(fi) {
                assert!((n.dot(h.vertex(v)) - d).abs() <= 1e-12, "planar");
            }
            let m = h.face_vertices(fi).len();
            for (i, &e) in h.face_edges(fi).iter().enumerate() {
                let ev = h.edge_vertices(e);
                let (a, b) = (h.face_vertices(fi)[i], h.face_vertices(fi)[(i + 1) % m]);
                assert!(ev == [a, b] || ev == [b, a]);
                assert!(h.edge_faces(e).contains(&fi));
            }
        }
        // Each feature's Voronoi region contains the outward offset of its own points.
        for fi in 0..f as u32 {
            let (n, _) = h.face_plane(fi);
            let vs = h.face_vertices(fi);
            let c = vs.iter().map(|&v| h.vertex(v)).sum::<DVec3>() / vs.len() as f64;
            let x = c + n;
            assert!(
                h.voronoi_region(Feature::Face(fi))
                    .iter()
                    .all(|p| p.signed(x) >= -1e-12)
            );
        }
        for ei in 0..e as u32 {
            let [a, b] = h.edge_vertices(ei).map(|v| h.vertex(v));
            let [f0, f1] = h.edge_faces(ei).map(|f| h.face_plane(f).0);
            let x = (a + b) * 0.5 + (f0 + f1).normalize();
            assert!(
                h.voronoi_region(Feature::Edge(ei))
                    .iter()
                    .all(|p| p.signed(x) >= -1e-12)
            );
        }
        // Corners: at least three edges, not all in one plane.
        for v in 0..v as u32 {
            let p = h.vertex(v);
            let dirs: Vec<DVec3> = h
                .vertex_edges(v)
                .iter()
                .map(|&e| {
                    let [a, b] = h.edge_vertices(e);
                    h.vertex(if a == v { b } else { a }) - p
                })
                .collect();
            assert!(dirs.len() >= 3);
            let n = dirs[0].cross(dirs[1]);
            assert!(
                dirs.iter().any(|d| n.dot(*d).abs() > 1e-9),
                "flat corner {v}"
            );
            let inc_faces: DVec3 = h
                .vertex_edges(v)
                .iter()
                .map(|&e| h.face_plane(h.edge_faces(e)[0]).0)
                .sum();
            let x = p + inc_faces.normalize();
            assert!(
                h.voronoi_region(Feature::Vertex(v))
                    .iter()
                    .all(|c| c.signed(x) >= -1e-12)
            );
        }
        // Hull vertices that are not corners lie on the boundary.
        let corners: Vec<u32> = (0..v as u32).map(|i| h.hull_vertex(i)).collect();
        for (i, p) in hull.vertices().iter().enumerate() {
            if !corners.contains(&(i as u32)) {
                let x = p.as_dvec3();
                assert!((0..f as u32).any(|fi| {
                    let (n, d) = h.face_plane(fi);
                    (n.dot(x) - d).abs() <= 1e-12
                }));
            }
        }
    }

    #[test]
    fn features_of_hulls_are_consistent() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let cube = hull_of(shapes::cuboid(Vec3::ONE).unwrap().vertices());
        assert_eq!(
            (
                cube.1.vertex_count(),
                cube.1.edge_count(),
                cube.1.face_count()
            ),
            (8, 12, 6)
        );
        let (_, cyl) = hull_of(shapes::cylinder(1.0, 1.0, 10).unwrap().vertices());
        assert_eq!((cyl.vertex_count(), cyl.face_count()), (20, 12));
        // A cube with points in its faces and on its edges: still 8 / 12 / 6.
        let mut pts = shapes::cuboid(Vec3::ONE).unwrap().vertices().to_vec();
        pts.extend([
            Vec3::new(0.0, 0.0, 1.0),
            Vec3::new(1.0, 0.0, 1.0),
            Vec3::new(0.5, 0.25, -1.0),
        ]);
        let c2 = hull_of(&pts);
        assert_eq!(
            (c2.1.vertex_count(), c2.1.edge_count(), c2.1.face_count()),
            (8, 12, 6)
        );
        let mut all = shape_pool(&mut rng);
        all.push(cube);
        all.push(c2);
        for (hull, h) in &all {
            assert_consistent(hull, h);
        }
    }

    #[test]
    fn random_pairs_match_oracle() {
        let mut rng = ChaCha8Rng::seed_from_u64(2);
        let pool = shape_pool(&mut rng);
        let (mut hits, mut misses) = (0, 0);
        let mut tracker = ClosestFeatures::new();
        for case in 0..300 {
            let i = rng.random_range(0..pool.len());
            let j = rng.random_range(0..pool.len());
            let pose = random_pose(&mut rng, 2.0);
            let (a, b) = (&pool[i], &pool[j]);
            tracker.reset();
            let r = tracker.query(&a.1, &b.1, &pose);
            let what = format!("case {case} ({i}, {j}) walk");
            if check(&r, (&a.0, &a.1), (&b.0, &b.1), &pose, &what) {
                hits += 1;
            } else {
                misses += 1;
            }
            let brute = proximity_brute_force(&a.1, &b.1, &pose);
            check(
                &brute,
                (&a.0, &a.1),
                (&b.0, &b.1),
                &pose,
                &format!("case {case} brute"),
            );
        }
        eprintln!(
            "random pairs: {hits} hit, {misses} miss, cold walk {:?}",
            tracker.stats
        );
        assert!(hits > 10 && misses > 10, "{hits} {misses}");
        assert!(
            tracker.stats.fallbacks * 50 <= tracker.stats.queries,
            "too many fallbacks: {:?}",
            tracker.stats
        );
    }

    /// A pair moving a little each frame: the warm-started walk stays a few steps per query and
    /// agrees with the oracle; cold starts on the same frames take more steps.
    #[test]
    fn warm_start_under_small_motion() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let shapes_ab = [
            (
                hull_of(shapes::icosphere(1.0, 2).unwrap().vertices()),
                hull_of(&random_points(&mut rng, 60, 1.0)),
            ),
            (
                hull_of(shapes::cylinder(0.8, 1.0, 24).unwrap().vertices()),
                hull_of(shapes::icosphere(0.7, 2).unwrap().vertices()),
            ),
        ];
        for (k, (a, b)) in shapes_ab.iter().enumerate() {
            let mut warm = ClosestFeatures::new();
            let mut cold = ClosestFeatures::new();
            let axis = DVec3::new(0.3, 1.0, -0.2).normalize();
            let mut penetrating_frames = 0;
            for frame in 0..100 {
                let t = frame as f64 / 100.0;
                let pose = DPose {
                    rotation: DMat3::from_axis_angle(axis, 2.0 * t),
                    // Passes through A: separated, penetrating, separated.
                    translation: DVec3::new(3.5 - 7.0 * t, 0.4 * (6.0 * t).sin(), 0.3),
                };
                let r = warm.query(&a.1, &b.1, &pose);
                cold.reset();
                let rc = cold.query(&a.1, &b.1, &pose);
                assert_eq!(r.is_penetrating(), rc.is_penetrating());
                assert!((r.distance() - rc.distance()).abs() <= 1e-9);
                if frame % 5 == 0 {
                    let what = format!("shapes {k} frame {frame}");
                    check(&r, (&a.0, &a.1), (&b.0, &b.1), &pose, &what);
                }
                penetrating_frames += r.is_penetrating() as u32;
            }
            let (w, c) = (warm.stats, cold.stats);
            eprintln!(
                "shapes {k}: warm {w:?} mean {}, cold {c:?} mean {}",
                w.mean_steps(),
                c.mean_steps()
            );
            assert!(penetrating_frames > 5 && penetrating_frames < 95);
            assert!(w.mean_steps() < 3.0, "warm {w:?}");
            assert!(
                c.mean_steps() > 2.0 * w.mean_steps(),
                "cold {c:?} warm {w:?}"
            );
            assert_eq!(w.fallbacks, 0);
        }
    }

    /// Touching, parallel, nested, edge-crossing and far-from-origin configurations.
    #[test]
    fn adversarial_configurations() {
        let cube = hull_of(shapes::cuboid(Vec3::ONE).unwrap().vertices());
        let small = hull_of(shapes::cuboid(Vec3::splat(0.25)).unwrap().vertices());
        let rot = |axis: DVec3, angle: f64, t: DVec3| DPose {
            rotation: DMat3::from_axis_angle(axis, angle),
            translation: t,
        };
        let s2 = std::f64::consts::SQRT_2;
        let cases: Vec<(&str, &Shape, DPose, Option<f64>)> = vec![
            (
                "face-face touching",
                &cube,
                rot(DVec3::Z, 0.0, DVec3::X * 2.0),
                None,
            ),
            (
                "face-face gap",
                &cube,
                rot(DVec3::Z, 0.0, DVec3::new(2.001, 0.3, -0.2)),
                Some(0.001),
            ),
            (
                "edge-edge touching",
                &cube,
                rot(DVec3::Z, std::f64::consts::FRAC_PI_4, DVec3::X * (1.0 + s2)),
                None,
            ),
            (
                "vertex-face gap",
                &small,
                rot(
                    DVec3::new(1.0, 1.0, 0.0).normalize(),
                    0.9553166181245093,
                    DVec3::Z * 1.5,
                ),
                None,
            ),
            (
                "nested",
                &small,
                rot(DVec3::Y, 0.3, DVec3::new(0.1, 0.2, -0.3)),
                Some(0.0),
            ),
            (
                "corner inside",
                &cube,
                rot(DVec3::Z, 0.0, DVec3::splat(1.9)),
                Some(0.0),
            ),
            (
                "crossed bars",
                &cube,
                rot(
                    DVec3::X,
                    std::f64::consts::FRAC_PI_4,
                    DVec3::new(0.0, 0.0, 0.0),
                ),
                Some(0.0),
            ),
        ];
        for (what, b, pose, expect) in cases {
            let mut tr = ClosestFeatures::new();
            let r = tr.query(&cube.1, &b.1, &pose);
            check(&r, (&cube.0, &cube.1), (&b.0, &b.1), &pose, what);
            if let Some(d) = expect {
                assert!((r.distance() - d).abs() < 1e-9, "{what}: {r:?}");
            }
            // The same pair warm-started from every feature pair of a few candidates.
            for fa in [Feature::Vertex(3), Feature::Edge(5), Feature::Face(2)] {
                for fb in [Feature::Vertex(6), Feature::Edge(1), Feature::Face(4)] {
                    tr.pair = Some((fa, fb));
                    let r2 = tr.query(&cube.1, &b.1, &pose);
                    assert_eq!(
                        r2.is_penetrating(),
                        r.is_penetrating(),
                        "{what} from {fa:?} {fb:?}"
                    );
                    assert!(
                        (r2.distance() - r.distance()).abs() < 1e-9,
                        "{what} from {fa:?} {fb:?}"
                    );
                }
            }
        }
        // Huge coordinates: everything scaled by 1e6 and moved 1e7 away from the origin.
        let mut rng = ChaCha8Rng::seed_from_u64(4);
        for case in 0..20 {
            let a = hull_of(
                &random_points(&mut rng, 12, 1e6)
                    .iter()
                    .map(|p| *p + Vec3::splat(1e7))
                    .collect::<Vec<_>>(),
            );
            let b = hull_of(&random_points(&mut rng, 12, 1e6));
            let mut pose = random_pose(&mut rng, 2.5e6);
            pose.translation += DVec3::splat(1e7);
            let r = ClosestFeatures::new().query(&a.1, &b.1, &pose);
            check(
                &r,
                (&a.0, &a.1),
                (&b.0, &b.1),
                &pose,
                &format!("huge {case}"),
            );
        }
    }

    #[test]
    fn red_green_faces() {
        let cube = shapes::cuboid(Vec3::new(1.0, 2.0, 0.5)).unwrap();
        let (_, f) = hull_of(cube.vertices());
        assert!(classify(&cube, &f).iter().all(|&c| c == FeatureColor::Red));
        let sphere = shapes::icosphere(1.0, 1).unwrap();
        let (_, f) = hull_of(sphere.vertices());
        assert!(
            classify(&sphere, &f)
                .iter()
                .all(|&c| c == FeatureColor::Red)
        );
        // Torus: the caps spanning the hole are green, the outer tube is red.
        let torus = shapes::torus(1.0, 0.3, 16, 8).unwrap();
        let (_, f) = hull_of(torus.vertices());
        let colors = classify(&torus, &f);
        let mut caps = 0;
        for (i, c) in colors.iter().enumerate() {
            let (n, _) = f.face_plane(i as u32);
            if n.z.abs() > 1.0 - 1e-9 {
                caps += 1;
                assert_eq!(*c, FeatureColor::Green, "cap face {i}");
                // The cap spans the hole: the z axis passes through it.
                let vs = f.face_vertices(i as u32);
                assert_eq!(vs.len(), 16);
            }
        }
        assert_eq!(caps, 2);
        assert!(colors.contains(&FeatureColor::Red));
        // Outer faces (normal pointing away from the axis, nearly horizontal) are red.
        for (i, c) in colors.iter().enumerate() {
            let (n, d) = f.face_plane(i as u32);
            if n.z.abs() < 0.1 && d > 1.2 {
                assert_eq!(*c, FeatureColor::Red, "outer face {i}");
            }
        }
        // The same cube mesh with one face flipped inward is not on the hull there: that face
        // is green.
        let mut tris = cube.triangles().to_vec();
        for t in tris.iter_mut().take(2) {
            t.swap(1, 2);
        }
        let bad = TriMesh::new(cube.vertices().to_vec(), tris).expect("valid mesh");
        let (_, f) = hull_of(bad.vertices());
        let colors = classify(&bad, &f);
        assert_eq!(
            colors.iter().filter(|&&c| c == FeatureColor::Green).count(),
            1
        );
    }

    #[test]
    fn red_green_edges() {
        let cube = shapes::cuboid(Vec3::new(1.0, 2.0, 0.5)).unwrap();
        let (_, f) = hull_of(cube.vertices());
        assert!(
            classify_edges(&cube, &f)
                .iter()
                .all(|&c| c == FeatureColor::Red)
        );
        // The torus hull's edges all run along mesh edges (rings and meridians).
        let torus = shapes::torus(1.0, 0.3, 16, 8).unwrap();
        let (_, f) = hull_of(torus.vertices());
        // Ring edges (constant z) are mesh edges, hence red. The f32 tube quads are not
        // exactly planar: where one folds inward the hull takes the other diagonal, which is no
        // mesh edge (green), and the two hull triangles beside it are then not covered by the
        // mesh (green faces).
        let edges = classify_edges(&torus, &f);
        let faces = classify(&torus, &f);
        for (e, c) in edges.iter().enumerate() {
            let [a, b] = f.edge_vertices(e as u32).map(|v| f.vertex(v));
            if a.z == b.z {
                assert_eq!(*c, FeatureColor::Red, "ring edge {e}");
            }
            if *c == FeatureColor::Green {
                for g in f.edge_faces(e as u32) {
                    assert_eq!(
                        faces[g as usize],
                        FeatureColor::Green,
                        "face {g} by edge {e}"
                    );
                }
            }
        }
        // A red face has only red edges, on every test shape.
        let meshes = [
            shapes::bumpy_sphere(1.0, 0.3, 3.0, 2, 7).unwrap(),
            shapes::torus(1.0, 0.5, 12, 6).unwrap(),
            shapes::cylinder(1.0, 0.5, 9).unwrap(),
        ];
        for m in &meshes {
            let (_, f) = hull_of(m.vertices());
            let (faces, edges) = (classify(m, &f), classify_edges(m, &f));
            for (i, c) in faces.iter().enumerate() {
                if *c == FeatureColor::Red {
                    for &e in f.face_edges(i as u32) {
                        assert_eq!(edges[e as usize], FeatureColor::Red);
                    }
                }
            }
        }

        // Two boxes side by side: the bridging edges and faces are green, the rest red.
        let bx = shapes::cuboid(Vec3::ONE).unwrap();
        let left = bx.transformed(&crate::Pose::from_translation(Vec3::X * -3.0));
        let right = bx.transformed(&crate::Pose::from_translation(Vec3::X * 3.0));
        let both = TriMesh::merge(&[&left, &right]).expect("merge");
        let (_, f) = hull_of(both.vertices());
        assert_eq!(
            (f.vertex_count(), f.edge_count(), f.face_count()),
            (8, 12, 6)
        );
        let edges = classify_edges(&both, &f);
        for (e, c) in edges.iter().enumerate() {
            let [a, b] = f.edge_vertices(e as u32).map(|v| f.vertex(v));
            let bridging = (a.x - b.x).abs() > 2.5;
            let expect = if bridging {
                FeatureColor::Green
            } else {
                FeatureColor::Red
            };
            assert_eq!(*c, expect, "edge {e}: {a} {b}");
        }
        let faces = classify(&both, &f);
        for (i, c) in faces.iter().enumerate() {
            let (n, _) = f.face_plane(i as u32);
            let expect = if n.x.abs() > 0.5 {
                FeatureColor::Red
            } else {
                FeatureColor::Green
            };
            assert_eq!(*c, expect, "face {i}");
        }
    }

    /// A zero step limit sends every query to the counted brute-force fallback, which agrees
    /// with the oracle; the walk near contact (shallow penetrations and near misses) too.
    #[test]
    fn fallback_and_near_contact() {
        let mut rng = ChaCha8Rng::seed_from_u64(5);
        let pool = shape_pool(&mut rng);
        let mut forced = ClosestFeatures::new().with_step_limit(0);
        let mut walk = ClosestFeatures::new();
        let (mut hits, mut misses) = (0, 0);
        for case in 0..150 {
            let a = &pool[rng.random_range(0..pool.len())];
            let b = &pool[rng.random_range(0..pool.len())];
            let mut pose = random_pose(&mut rng, 1.0);
            // Slide B along a random direction until the two are about to touch.
            let dir = pose.translation.normalize_or(DVec3::X);
            let probe = |s: f64| {
                let mut p = pose;
                p.translation = dir * s;
                proximity_brute_force(&a.1, &b.1, &p).is_penetrating()
            };
            let (mut lo, mut hi) = (0.0, 4.0);
            for _ in 0..30 {
                let mid = 0.5 * (lo + hi);
                if probe(mid) {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            pose.translation = dir * (hi + rng.random_range(-1e-4..1e-4));
            let what = format!("near contact {case}");
            let r = forced.query(&a.1, &b.1, &pose);
            check(&r, (&a.0, &a.1), (&b.0, &b.1), &pose, &what);
            walk.reset();
            let r = walk.query(&a.1, &b.1, &pose);
            if check(&r, (&a.0, &a.1), (&b.0, &b.1), &pose, &what) {
                hits += 1;
            } else {
                misses += 1;
            }
        }
        assert_eq!(forced.stats.fallbacks, 150);
        assert_eq!(forced.stats.steps, 0);
        eprintln!(
            "near contact: {hits} hit, {misses} miss, walk {:?}",
            walk.stats
        );
        assert!(hits > 20 && misses > 20);
    }

    /// Hulls of random subsets of a 5×5×5 grid's surface: many coplanar hull triangles and
    /// non-corner hull vertices. Pairs under axis-aligned rotations and integer translations
    /// touch, share face planes and overlap exactly; all must match the oracle.
    #[test]
    fn grid_hulls_coplanar_and_touching() {
        let mut rng = ChaCha8Rng::seed_from_u64(9);
        let mut grid = Vec::new();
        for x in -2..=2i32 {
            for y in -2..=2i32 {
                for z in -2..=2i32 {
                    if x.abs() == 2 || y.abs() == 2 || z.abs() == 2 {
                        grid.push(Vec3::new(x as f32, y as f32, z as f32));
                    }
                }
            }
        }
        let mut hulls = Vec::new();
        let mut dropped = 0;
        while hulls.len() < 12 {
            let mut pts: Vec<Vec3> = grid
                .iter()
                .copied()
                .filter(|_| rng.random::<f64>() < 0.4)
                .collect();
            for i in (1..pts.len()).rev() {
                pts.swap(i, rng.random_range(0..=i));
            }
            let Ok(Hull::Solid(h)) = convex_hull(&pts) else {
                continue;
            };
            let f = HullFeatures::new(&h).expect("features");
            assert_consistent(&h, &f);
            dropped += h.vertices().len() - f.vertex_count();
            hulls.push((h, f));
        }
        assert!(dropped > 0, "no hull kept a non-corner vertex");
        let quarter = [
            DMat3::IDENTITY,
            DMat3::from_cols(DVec3::Y, -DVec3::X, DVec3::Z),
            DMat3::from_cols(DVec3::X, DVec3::Z, -DVec3::Y),
        ];
        let (mut touching, mut apart, mut tracker) = (0, 0, ClosestFeatures::new());
        for case in 0..150 {
            let a = &hulls[rng.random_range(0..hulls.len())];
            let b = &hulls[rng.random_range(0..hulls.len())];
            let t = DVec3::new(
                rng.random_range(-5..=5) as f64,
                rng.random_range(-5..=5) as f64,
                rng.random_range(-1..=1) as f64,
            );
            let pose = DPose {
                rotation: quarter[rng.random_range(0..3)],
                translation: t,
            };
            let r = tracker.query(&a.1, &b.1, &pose);
            let what = format!("grid case {case}");
            if check(&r, (&a.0, &a.1), (&b.0, &b.1), &pose, &what) {
                touching += 1;
            } else {
                apart += 1;
            }
            let brute = proximity_brute_force(&a.1, &b.1, &pose);
            check(&brute, (&a.0, &a.1), (&b.0, &b.1), &pose, &what);
        }
        eprintln!(
            "grid: {touching} touching/overlapping, {apart} apart, {:?}",
            tracker.stats
        );
        assert!(touching > 10 && apart > 10);
        assert!(tracker.stats.fallbacks * 20 <= tracker.stats.queries);
    }
}
