//! Mesh import and export: Wavefront OBJ (checked here line by line, triangulated by `tobj`) and
//! STL, ASCII and binary (read here, so that every refusal names the line or the triangle;
//! written by `stl_io`).
//!
//! This is the input stage of every paper the project implements (the benchmark meshes of
//! Gress–Zachmann 2004 section 5 and Wang–Faure–Pai 2012 section 7 are OBJ files); it is not
//! itself a paper algorithm. Loading always ends in [`TriMesh::with_options`], so every loaded
//! mesh is validated (finite coordinates, in-range indices, at least one triangle).
//!
//! * OBJ: all objects and groups are merged into one mesh with a single index on positions
//!   (texture coordinates and normals are ignored), polygons are triangulated as fans, point and
//!   line elements (`p`, `l`) are ignored; a face (`f`) needs at least 3 vertices. Coordinates
//!   and face indices (1-based, or negative = relative to the last vertex) are checked here first
//!   so that errors name the line; `tobj` then parses and triangulates the checked text.
//! * Coordinates must be finite `f32`: `nan` and `inf` are refused as not finite, and a finite
//!   number too large for `f32` (`1e300`, beyond ±3.4028235e38) is refused as exceeding the
//!   `f32` range (it would silently become infinity), in both formats.
//! * STL: ASCII or binary, detected from the content (a binary file whose 80-byte header starts
//!   with `solid` is still read as binary when its size matches the triangle count or when it
//!   holds a NUL byte, which text never does). A binary
//!   file must hold the triangles its header announces (checked before anything is allocated;
//!   bytes after them are ignored); an ASCII file is `solid NAME`, facets of exactly three
//!   vertices (`facet normal nx ny nz` / `outer loop` / 3 × `vertex x y z` / `endloop` /
//!   `endfacet`, keywords in any case, normals read but ignored) and `endsolid`, possibly
//!   followed by further solids, which are merged. STL stores
//!   three vertices per triangle, so STL vertices are always welded: with
//!   [`MeshOptions::weld_tolerance`] when set, otherwise exactly (`Some(0.0)`).
//!
//! Errors are [`LoadError`]s naming the file and the reason; malformed input never panics.

use crate::error::{LoadError, SaveError};
use crate::mesh::{MeshOptions, TriMesh, ValidationReport};
use glam::Vec3;
use std::fmt::Write as _;
use std::io::{Cursor, Read, Write};
use std::path::{Path, PathBuf};

/// The path that errors name for meshes read from memory or a reader.
pub const MEMORY_PATH: &str = "<memory>";

/// A mesh file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MeshFormat {
    /// Wavefront OBJ.
    Obj,
    /// STL, ASCII or binary (binary when written).
    Stl,
}

impl MeshFormat {
    /// The format named by the path's extension (`.obj`, `.stl`, any case), if any.
    pub fn from_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?;
        if ext.eq_ignore_ascii_case("obj") {
            Some(Self::Obj)
        } else if ext.eq_ignore_ascii_case("stl") {
            Some(Self::Stl)
        } else {
            None
        }
    }
}

/// Loads an OBJ or STL file (chosen by extension, case-insensitive) into a validated mesh.
pub fn load_mesh(path: &Path, opts: &MeshOptions) -> Result<TriMesh, LoadError> {
    load_mesh_with_report(path, opts).map(|(mesh, _)| mesh)
}

/// [`load_mesh`], also returning what validation found and changed.
pub fn load_mesh_with_report(
    path: &Path,
    opts: &MeshOptions,
) -> Result<(TriMesh, ValidationReport), LoadError> {
    let format = MeshFormat::from_path(path).ok_or_else(|| LoadError::UnknownFormat {
        path: path.to_path_buf(),
    })?;
    let bytes = std::fs::read(path).map_err(|source| LoadError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    parse_mesh(&bytes, format, opts, path)
}

/// Parses a mesh held in memory; errors name `path` (use [`MEMORY_PATH`] when there is none).
pub fn parse_mesh(
    bytes: &[u8],
    format: MeshFormat,
    opts: &MeshOptions,
    path: &Path,
) -> Result<(TriMesh, ValidationReport), LoadError> {
    if bytes.is_empty() {
        return Err(parse_error(path, "empty file".to_string()));
    }
    let (vertices, triangles, opts) = match format {
        MeshFormat::Obj => {
            let (v, t) = obj_soup(bytes, path)?;
            (v, t, *opts)
        }
        MeshFormat::Stl => {
            let (v, t) = stl_soup(bytes, path)?;
            let opts = MeshOptions {
                weld_tolerance: Some(opts.weld_tolerance.unwrap_or(0.0)),
                ..*opts
            };
            (v, t, opts)
        }
    };
    TriMesh::with_options(vertices, triangles, &opts).map_err(|source| LoadError::Invalid {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads an OBJ mesh from a reader (errors name [`MEMORY_PATH`]).
pub fn load_obj_from_reader<R: Read>(reader: R, opts: &MeshOptions) -> Result<TriMesh, LoadError> {
    load_from_reader(reader, MeshFormat::Obj, opts)
}

/// Reads an ASCII or binary STL mesh from a reader (errors name [`MEMORY_PATH`]).
pub fn load_stl_from_reader<R: Read>(reader: R, opts: &MeshOptions) -> Result<TriMesh, LoadError> {
    load_from_reader(reader, MeshFormat::Stl, opts)
}

fn load_from_reader<R: Read>(
    mut reader: R,
    format: MeshFormat,
    opts: &MeshOptions,
) -> Result<TriMesh, LoadError> {
    let path = Path::new(MEMORY_PATH);
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|source| LoadError::Io {
            path: path.to_path_buf(),
            source,
        })?;
    parse_mesh(&bytes, format, opts, path).map(|(mesh, _)| mesh)
}

fn parse_error(path: &Path, reason: String) -> LoadError {
    LoadError::Parse {
        path: path.to_path_buf(),
        reason,
    }
}

type Soup = (Vec<Vec3>, Vec<[u32; 3]>);

/// Checks an OBJ text line by line and rewrites it to only `v` and position-only `f` lines with
/// positive indices, which `tobj` then triangulates as one model.
fn sanitize_obj(text: &str, path: &Path) -> Result<String, LoadError> {
    let mut out = String::with_capacity(text.len());
    let mut positions: u64 = 0;
    for (line_index, line) in text.lines().enumerate() {
        let line_no = line_index + 1;
        let mut words = line.split_whitespace();
        match words.next() {
            Some("v") => {
                let mut coords = [0.0f32; 3];
                for c in &mut coords {
                    let word = words.next().ok_or_else(|| {
                        parse_error(
                            path,
                            format!("line {line_no}: vertex with fewer than 3 coordinates"),
                        )
                    })?;
                    *c = parse_coordinate(word)
                        .map_err(|why| parse_error(path, format!("line {line_no}: {why}")))?;
                }
                // Writing the parsed values keeps what tobj sees identical to what was checked.
                let _ = writeln!(out, "v {} {} {}", coords[0], coords[1], coords[2]);
                positions += 1;
            }
            Some("f") => {
                let mut indices = Vec::new();
                for word in words {
                    let first = word.split('/').next().unwrap_or("");
                    let raw: i64 = first.parse().map_err(|_| {
                        parse_error(path, format!("line {line_no}: bad face vertex {word:?}"))
                    })?;
                    let resolved = if raw > 0 {
                        raw
                    } else {
                        // Relative index: -1 is the last vertex defined so far; 0 is invalid.
                        (positions as i64).saturating_add(raw).saturating_add(1)
                    };
                    if raw == 0 || resolved < 1 || resolved > positions as i64 {
                        return Err(parse_error(
                            path,
                            format!(
                                "line {line_no}: face vertex index {raw} out of range \
                                 ({positions} vertices defined so far)"
                            ),
                        ));
                    }
                    indices.push(resolved);
                }
                if indices.len() < 3 {
                    return Err(parse_error(
                        path,
                        format!(
                            "line {line_no}: face with {} vertices (a face needs at least 3)",
                            indices.len()
                        ),
                    ));
                }
                out.push('f');
                for i in indices {
                    let _ = write!(out, " {i}");
                }
                out.push('\n');
            }
            // Texture coordinates, normals, point and line elements, groups, objects, materials,
            // smoothing groups, comments and unknown statements do not affect the merged surface.
            _ => {}
        }
    }
    Ok(out)
}

fn obj_soup(bytes: &[u8], path: &Path) -> Result<Soup, LoadError> {
    let text = String::from_utf8_lossy(bytes);
    let clean = sanitize_obj(&text, path)?;
    // The struct update covers fields that exist only under tobj's optional features.
    #[allow(clippy::needless_update)]
    let options = tobj::LoadOptions {
        triangulate: true,
        single_index: true,
        ignore_points: true,
        ignore_lines: true,
        ..Default::default()
    };
    let (models, _materials) =
        tobj::load_obj_buf(&mut Cursor::new(clean.as_bytes()), &options, |_| {
            Err(tobj::LoadError::OpenFileFailed)
        })
        .map_err(|e| parse_error(path, format!("OBJ: {e}")))?;
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    for model in &models {
        let mesh = &model.mesh;
        let base = vertices.len();
        // `tobj::Float` is `f64` when tobj's `use_f64` feature is enabled anywhere.
        #[allow(clippy::unnecessary_cast)]
        for p in mesh.positions.chunks_exact(3) {
            vertices.push(Vec3::new(p[0] as f32, p[1] as f32, p[2] as f32));
        }
        for t in mesh.indices.chunks_exact(3) {
            let mut tri = [0u32; 3];
            for (k, &i) in t.iter().enumerate() {
                let global = base + i as usize;
                tri[k] = u32::try_from(global).map_err(|_| {
                    parse_error(
                        path,
                        "OBJ: more vertices than 32-bit indices allow".to_string(),
                    )
                })?;
            }
            triangles.push(tri);
        }
    }
    Ok((vertices, triangles))
}

/// Reads a coordinate as a finite `f32`, saying which limit a refused one breaks.
fn parse_coordinate(word: &str) -> Result<f32, String> {
    let x = word
        .parse::<f32>()
        .map_err(|_| format!("vertex coordinate {word:?} is not a number"))?;
    if x.is_nan() {
        return Err(format!(
            "vertex coordinate {word:?} is not a finite number (NaN)"
        ));
    }
    if x.is_infinite() {
        let spelled_infinite = word
            .trim_start_matches(['+', '-'])
            .get(..3)
            .is_some_and(|w| w.eq_ignore_ascii_case("inf"));
        return Err(if spelled_infinite {
            format!("vertex coordinate {word:?} is not a finite number")
        } else {
            format!(
                "vertex coordinate {word} exceeds the f32 range (±{:e})",
                f32::MAX
            )
        });
    }
    Ok(x)
}

/// Whether the bytes start (after blanks) with the ASCII STL keyword `solid`.
fn starts_with_solid(bytes: &[u8]) -> bool {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let rest = &bytes[start..];
    rest.len() >= 5
        && rest[..5].eq_ignore_ascii_case(b"solid")
        && rest.get(5).is_none_or(|b| b.is_ascii_whitespace())
}

fn stl_soup(bytes: &[u8], path: &Path) -> Result<Soup, LoadError> {
    let announced = (bytes.len() >= 84)
        .then(|| u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]) as u64);
    let binary_size_matches = announced.is_some_and(|n| 84 + 50 * n == bytes.len() as u64);
    // Text never holds a NUL byte; binary STL nearly always does (zero bytes of floats, the
    // attribute words), so a binary file whose header says `solid` but whose size is off is
    // reported as a binary size mismatch, not as bad ASCII.
    if !binary_size_matches && starts_with_solid(bytes) && !bytes.contains(&0) {
        return ascii_stl_soup(bytes, path);
    }
    let Some(n) = announced else {
        return Err(parse_error(
            path,
            format!(
                "binary STL: the file has {} bytes, fewer than the 84-byte header",
                bytes.len()
            ),
        ));
    };
    let needed = 84 + 50 * n;
    if (bytes.len() as u64) < needed {
        return Err(parse_error(
            path,
            format!(
                "binary STL truncated: the header announces {n} triangles ({needed} bytes) \
                 but the file has {} bytes",
                bytes.len()
            ),
        ));
    }
    // The file holds all n records, so n < bytes.len() / 50: the allocations are bounded by the
    // input's size, whatever the header claims.
    let n = n as usize;
    if n > (u32::MAX / 3) as usize {
        return Err(parse_error(
            path,
            format!("binary STL: {n} triangles are more than 32-bit indices allow"),
        ));
    }
    let mut vertices = Vec::with_capacity(3 * n);
    let mut triangles = Vec::with_capacity(n);
    for (t, record) in bytes[84..needed as usize].chunks_exact(50).enumerate() {
        // 12 bytes of normal (ignored), three vertices of 3 little-endian f32, 2 attribute bytes.
        for k in 0..3 {
            let mut v = [0.0f32; 3];
            for (axis, c) in v.iter_mut().enumerate() {
                let at = 12 + 12 * k + 4 * axis;
                *c = f32::from_le_bytes([
                    record[at],
                    record[at + 1],
                    record[at + 2],
                    record[at + 3],
                ]);
                if !c.is_finite() {
                    return Err(parse_error(
                        path,
                        format!(
                            "binary STL: triangle {t}, vertex {k}: coordinate {} is {:?}, not a \
                             finite number",
                            ["x", "y", "z"][axis],
                            *c
                        ),
                    ));
                }
            }
            vertices.push(Vec3::from_array(v));
        }
        let base = 3 * t as u32;
        triangles.push([base, base + 1, base + 2]);
    }
    Ok((vertices, triangles))
}

/// Whitespace-separated words of a text with their 1-based line numbers.
struct Words<'a> {
    lines: std::iter::Enumerate<std::str::Lines<'a>>,
    current: Option<(usize, std::str::SplitWhitespace<'a>)>,
    /// The line of the last word read (for end-of-file messages: the last line).
    line: usize,
}

impl<'a> Words<'a> {
    fn new(text: &'a str) -> Self {
        Self {
            lines: text.lines().enumerate(),
            current: None,
            line: 0,
        }
    }

    fn next_word(&mut self) -> Option<(usize, &'a str)> {
        loop {
            if let Some((line, words)) = &mut self.current
                && let Some(w) = words.next()
            {
                self.line = *line;
                return Some((*line, w));
            }
            let (i, text) = self.lines.next()?;
            self.current = Some((i + 1, text.split_whitespace()));
        }
    }

    /// Drops the rest of the current line (a solid's name).
    fn skip_line(&mut self) {
        self.current = None;
    }
}

/// Parses ASCII STL; errors say `ASCII STL: line L: …` and, inside a facet, which triangle.
fn ascii_stl_soup(bytes: &[u8], path: &Path) -> Result<Soup, LoadError> {
    let text = String::from_utf8_lossy(bytes);
    let mut words = Words::new(&text);
    let err =
        |line: usize, what: String| parse_error(path, format!("ASCII STL: line {line}: {what}"));
    let mut vertices = Vec::new();
    let mut triangles = Vec::new();
    // Expects the keyword `kw` (any case) as the next word.
    fn expect<'a>(
        words: &mut Words<'a>,
        kw: &str,
        context: &str,
    ) -> Result<usize, (usize, String)> {
        match words.next_word() {
            Some((line, w)) if w.eq_ignore_ascii_case(kw) => Ok(line),
            Some((line, w)) => Err((line, format!("expected `{kw}` {context}, found {w:?}"))),
            None => Err((
                words.line,
                format!("the file ends where `{kw}` was expected {context}"),
            )),
        }
    }
    let mut solids = 0usize;
    loop {
        match words.next_word() {
            None if solids > 0 => break,
            None => return Err(err(words.line, "no `solid` in the file".into())),
            Some((_, w)) if w.eq_ignore_ascii_case("solid") => words.skip_line(),
            Some((line, w)) => {
                return Err(err(line, format!("expected `solid`, found {w:?}")));
            }
        }
        solids += 1;
        loop {
            let t = triangles.len();
            let context = format!("(triangle {t})");
            match words.next_word() {
                Some((_, w)) if w.eq_ignore_ascii_case("endsolid") => {
                    words.skip_line();
                    break;
                }
                Some((_, w)) if w.eq_ignore_ascii_case("facet") => {}
                Some((line, w)) => {
                    return Err(err(
                        line,
                        format!("expected `facet` or `endsolid` after triangle {t}, found {w:?}"),
                    ));
                }
                None => {
                    return Err(err(
                        words.line,
                        format!("the file ends after triangle {t} without `endsolid`"),
                    ));
                }
            }
            expect(&mut words, "normal", &context).map_err(|(l, m)| err(l, m))?;
            for _ in 0..3 {
                match words.next_word() {
                    Some((line, w)) => {
                        // The normal is not used (it is recomputed), but it must be a number.
                        w.parse::<f32>().map_err(|_| {
                            err(
                                line,
                                format!("facet normal component {w:?} is not a number {context}"),
                            )
                        })?;
                    }
                    None => {
                        return Err(err(
                            words.line,
                            format!("the file ends in a facet normal {context}"),
                        ));
                    }
                }
            }
            expect(&mut words, "outer", &context).map_err(|(l, m)| err(l, m))?;
            expect(&mut words, "loop", &context).map_err(|(l, m)| err(l, m))?;
            for k in 0..3 {
                let line = expect(&mut words, "vertex", &format!("{context}, vertex {k} of 3"))
                    .map_err(|(l, m)| err(l, m))?;
                let mut v = [0.0f32; 3];
                for c in &mut v {
                    let Some((line, w)) = words.next_word() else {
                        return Err(err(line, format!("the file ends in a vertex {context}")));
                    };
                    *c =
                        parse_coordinate(w).map_err(|why| err(line, format!("{why} {context}")))?;
                }
                vertices.push(Vec3::from_array(v));
            }
            match words.next_word() {
                Some((_, w)) if w.eq_ignore_ascii_case("endloop") => {}
                Some((line, w)) if w.eq_ignore_ascii_case("vertex") => {
                    return Err(err(
                        line,
                        format!(
                            "a facet with more than 3 vertices {context}: STL facets are triangles"
                        ),
                    ));
                }
                Some((line, w)) => {
                    return Err(err(
                        line,
                        format!("expected `endloop` {context}, found {w:?}"),
                    ));
                }
                None => {
                    return Err(err(
                        words.line,
                        format!("the file ends where `endloop` was expected {context}"),
                    ));
                }
            }
            expect(&mut words, "endfacet", &context).map_err(|(l, m)| err(l, m))?;
            let base = u32::try_from(vertices.len() - 3)
                .ok()
                .filter(|b| *b <= u32::MAX - 3)
                .ok_or_else(|| {
                    err(
                        words.line,
                        "more triangles than 32-bit indices allow".into(),
                    )
                })?;
            triangles.push([base, base + 1, base + 2]);
        }
    }
    Ok((vertices, triangles))
}

/// Writes a mesh as OBJ text (every vertex, 1-based triangle indices). Coordinates are written
/// in Rust's shortest round-trip form, so reading the file back gives the same `f32` values.
pub fn write_obj<W: Write>(mesh: &TriMesh, writer: W) -> std::io::Result<()> {
    let mut w = std::io::BufWriter::new(writer);
    writeln!(w, "# written by interfere_geometry")?;
    for v in mesh.vertices() {
        writeln!(w, "v {} {} {}", v.x, v.y, v.z)?;
    }
    for [a, b, c] in mesh.triangles() {
        writeln!(w, "f {} {} {}", a + 1, b + 1, c + 1)?;
    }
    w.flush()
}

/// Writes a mesh as binary STL (unit face normals; zero for degenerate triangles).
pub fn write_stl<W: Write>(mesh: &TriMesh, mut writer: W) -> std::io::Result<()> {
    let triangles: Vec<stl_io::Triangle> = (0..mesh.triangle_count())
        .map(|t| stl_io::Triangle {
            normal: stl_io::Normal::new(mesh.face_normal(t).to_array()),
            vertices: mesh.triangle(t).map(|p| stl_io::Vertex::new(p.to_array())),
        })
        .collect();
    stl_io::write_stl(&mut writer, triangles.iter())
}

fn save_with(
    path: &Path,
    write: impl FnOnce(&mut std::fs::File) -> std::io::Result<()>,
) -> Result<(), SaveError> {
    let io = |source| SaveError::Io {
        path: PathBuf::from(path),
        source,
    };
    let mut file = std::fs::File::create(path).map_err(io)?;
    write(&mut file).map_err(io)
}

/// Saves a mesh as an OBJ file.
pub fn save_obj(mesh: &TriMesh, path: &Path) -> Result<(), SaveError> {
    save_with(path, |f| write_obj(mesh, f))
}

/// Saves a mesh as a binary STL file.
pub fn save_stl(mesh: &TriMesh, path: &Path) -> Result<(), SaveError> {
    save_with(path, |f| write_stl(mesh, f))
}

/// Saves a mesh in the format named by the path's extension (`.obj` or `.stl`, any case).
pub fn save_mesh(mesh: &TriMesh, path: &Path) -> Result<(), SaveError> {
    match MeshFormat::from_path(path) {
        Some(MeshFormat::Obj) => save_obj(mesh, path),
        Some(MeshFormat::Stl) => save_stl(mesh, path),
        None => Err(SaveError::UnknownFormat {
            path: path.to_path_buf(),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::MeshError;
    use crate::shapes;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A unique temporary file that is removed when dropped.
    struct TempFile(PathBuf);

    impl TempFile {
        fn new(name: &str) -> Self {
            static COUNTER: AtomicU64 = AtomicU64::new(0);
            let n = COUNTER.fetch_add(1, Ordering::Relaxed);
            let path = std::env::temp_dir()
                .join(format!("interfere_io_{}_{n}_{name}", std::process::id()));
            Self(path)
        }
        fn with_bytes(name: &str, bytes: &[u8]) -> Self {
            let file = Self::new(name);
            std::fs::write(&file.0, bytes).unwrap();
            file
        }
    }

    impl Drop for TempFile {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }

    fn cube() -> TriMesh {
        shapes::cuboid(Vec3::new(1.0, 2.0, 0.5))
            .unwrap()
            .into_mesh()
    }

    fn ascii_stl(mesh: &TriMesh, header: &str) -> String {
        let mut s = format!("{header}\n");
        for t in 0..mesh.triangle_count() {
            let n = mesh.face_normal(t);
            let _ = writeln!(s, "  facet normal {} {} {}\n    outer loop", n.x, n.y, n.z);
            for p in mesh.triangle(t) {
                let _ = writeln!(s, "      vertex {:e} {:e} {:e}", p.x, p.y, p.z);
            }
            s.push_str("    endloop\n  endfacet\n");
        }
        s.push_str("endsolid cube\n");
        s
    }

    /// Same triangles corner for corner (vertex numbering may differ).
    fn same_triangles(a: &TriMesh, b: &TriMesh) -> bool {
        a.triangle_count() == b.triangle_count()
            && (0..a.triangle_count()).all(|t| a.triangle(t) == b.triangle(t))
    }

    fn assert_parse_error(result: Result<TriMesh, LoadError>, path: &Path, needle: &str) {
        match result {
            Err(LoadError::Parse { path: p, reason }) => {
                assert_eq!(p, path);
                assert!(
                    reason.contains(needle),
                    "reason {reason:?} lacks {needle:?}"
                );
                let shown = LoadError::Parse { path: p, reason }.to_string();
                assert!(shown.contains(&path.display().to_string()));
            }
            other => panic!("expected a parse error containing {needle:?}, got {other:?}"),
        }
    }

    #[test]
    fn ascii_and_binary_stl_cube_weld_to_8_vertices() {
        let cube = cube();
        let opts = MeshOptions::default();
        for header in ["solid cube", "solid", "  SOLID cube"] {
            let file = TempFile::with_bytes("cube.stl", ascii_stl(&cube, header).as_bytes());
            let mesh = load_mesh(&file.0, &opts).unwrap();
            assert_eq!(mesh.vertices().len(), 8, "header {header:?}");
            assert_eq!(mesh.triangle_count(), 12);
            assert!(same_triangles(&mesh, &cube));
            assert!((mesh.signed_volume() - cube.signed_volume()).abs() < 1e-9);
        }
        let file = TempFile::new("cube.STL");
        save_stl(&cube, &file.0).unwrap();
        let bytes = std::fs::read(&file.0).unwrap();
        assert_eq!(bytes.len(), 84 + 50 * 12);
        let (mesh, report) = load_mesh_with_report(&file.0, &opts).unwrap();
        assert_eq!(mesh.vertices().len(), 8);
        assert_eq!(mesh.triangle_count(), 12);
        assert_eq!(report.welded_vertices, 36 - 8);
        assert!(same_triangles(&mesh, &cube));
        // A binary file whose header starts with "solid" (some exporters do this).
        let mut solid_header = bytes.clone();
        solid_header[..11].copy_from_slice(b"solid cube ");
        let mesh = load_stl_from_reader(&solid_header[..], &opts).unwrap();
        assert!(same_triangles(&mesh, &cube));
    }

    #[test]
    fn obj_round_trip_and_merging_of_objects() {
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        for (i, solid) in [
            shapes::icosphere(1.3, 2).unwrap(),
            shapes::torus(2.0, 0.5, 12, 8).unwrap(),
            shapes::cylinder(0.7, 1.1, 9).unwrap(),
        ]
        .into_iter()
        .enumerate()
        {
            // Awkward coordinates exercise the shortest round-trip float formatting.
            let offset = Vec3::new(
                rng.random::<f32>() * 1e-3,
                rng.random::<f32>() * 1e4,
                -rng.random::<f32>(),
            );
            let pose = crate::pose::Pose::new(glam::Quat::from_rotation_y(0.3), offset);
            let mesh = solid.mesh().transformed(&pose);
            let obj = TempFile::new(&format!("m{i}.Obj"));
            save_mesh(&mesh, &obj.0).unwrap();
            let back = load_mesh(&obj.0, &MeshOptions::default()).unwrap();
            assert_eq!(back.vertices().len(), mesh.vertices().len());
            assert!(same_triangles(&back, &mesh));
            let stl = TempFile::new(&format!("m{i}.stl"));
            save_mesh(&mesh, &stl.0).unwrap();
            let back = load_mesh(&stl.0, &MeshOptions::default()).unwrap();
            assert_eq!(back.vertices().len(), mesh.vertices().len());
            assert!(same_triangles(&back, &mesh));
        }
        // Two objects sharing vertices, a quad, a pentagon, negative indices, texture and normal
        // references, a point and a line element: one mesh, shared vertices stay shared.
        let text = "# test\nmtllib nothing.mtl\no first\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\n\
                    vt 0 0\nvn 0 0 1\nf 1/1/1 2/1/1 3/1/1 4/1/1\ng second\nv 0.5 0.5 1\n\
                    usemtl red\nf -5//1 -4//1 -1//1\nf 2 3 5\np 1\nl 1 2\n\
                    o third\nv 2 0 0\nv 3 0 0\nv 3 1 0\nf 2 6 7 8 3\n";
        let mesh = load_obj_from_reader(text.as_bytes(), &MeshOptions::default()).unwrap();
        assert_eq!(mesh.triangle_count(), 2 + 1 + 1 + 3);
        assert_eq!(mesh.vertices().len(), 8);
        assert_eq!(
            mesh.triangle(2),
            [Vec3::ZERO, Vec3::X, Vec3::new(0.5, 0.5, 1.0)]
        );
        assert_eq!(
            mesh.triangle(4),
            [Vec3::X, Vec3::new(2.0, 0.0, 0.0), Vec3::new(3.0, 0.0, 0.0)]
        );
    }

    #[test]
    fn dispatch_on_extension_and_missing_files() {
        let opts = MeshOptions::default();
        let weird = TempFile::with_bytes("cube.ply", b"ply\n");
        assert!(matches!(
            load_mesh(&weird.0, &opts),
            Err(LoadError::UnknownFormat { path }) if path == weird.0
        ));
        let none = TempFile::new("no_extension");
        assert!(matches!(
            load_mesh(&none.0, &opts),
            Err(LoadError::UnknownFormat { .. })
        ));
        let missing = TempFile::new("missing.obj");
        match load_mesh(&missing.0, &opts) {
            Err(e @ LoadError::Io { .. }) => {
                assert!(e.to_string().contains(&missing.0.display().to_string()))
            }
            other => panic!("expected an I/O error, got {other:?}"),
        }
        assert!(matches!(
            save_mesh(&cube(), &weird.0),
            Err(SaveError::UnknownFormat { .. })
        ));
        assert_eq!(
            MeshFormat::from_path(Path::new("a/B.oBj")),
            Some(MeshFormat::Obj)
        );
    }

    #[test]
    fn malformed_files_give_errors_naming_the_file() {
        let opts = MeshOptions::default();
        let cube = cube();
        let mut binary = Vec::new();
        write_stl(&cube, &mut binary).unwrap();

        let cases: Vec<(&str, Vec<u8>, &str)> = vec![
            ("empty.obj", vec![], "empty file"),
            ("empty.stl", vec![], "empty file"),
            ("short.stl", binary[..40].to_vec(), "84-byte header"),
            (
                "truncated.stl",
                binary[..binary.len() - 7].to_vec(),
                "truncated",
            ),
            (
                "huge_count.stl",
                {
                    let mut b = binary.clone();
                    b[80..84].copy_from_slice(&u32::MAX.to_le_bytes());
                    b
                },
                "truncated",
            ),
            (
                "face.obj",
                b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n".to_vec(),
                "line 4",
            ),
            (
                "zero.obj",
                b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n".to_vec(),
                "out of range",
            ),
            (
                "neg.obj",
                b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf -4 1 2\n".to_vec(),
                "out of range",
            ),
            (
                "hugeneg.obj",
                b"v 0 0 0\nvt 0 0\nf 1/-9223372036854775807 1 1\nf -9223372036854775808 1 1\n"
                    .to_vec(),
                "line 4",
            ),
            (
                "garbage.obj",
                b"v 0 0 0\nf a b c\n".to_vec(),
                "bad face vertex",
            ),
            (
                "nan.obj",
                b"v 0 0 nan\nv 1 0 0\nv 0 1 0\nf 1 2 3\n".to_vec(),
                "line 1: vertex coordinate \"nan\" is not a finite number",
            ),
            (
                "inf.obj",
                b"v 0 0 inf\nv 1 0 0\nv 0 1 0\nf 1 2 3\n".to_vec(),
                "line 1: vertex coordinate \"inf\" is not a finite number",
            ),
            (
                // Finite, but not an f32: the message says which limit it breaks.
                "huge.obj",
                b"v 0 0 0\nv 1 0 1e300\nv 0 1 0\nf 1 2 3\n".to_vec(),
                "line 2: vertex coordinate 1e300 exceeds the f32 range (±3.4028235e38)",
            ),
            (
                "line_face.obj",
                b"v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nf 1 2\n".to_vec(),
                "line 5: face with 2 vertices (a face needs at least 3)",
            ),
            (
                "huge.stl",
                ascii_stl(&cube, "solid x")
                    .replacen("vertex 1e0", "vertex -4e38", 1)
                    .into_bytes(),
                "vertex coordinate -4e38 exceeds the f32 range",
            ),
            (
                "quad.stl",
                b"solid q\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n\
                  vertex 1 1 0\nvertex 0 1 0\nendloop\nendfacet\nendsolid q\n"
                    .to_vec(),
                "line 7: a facet with more than 3 vertices (triangle 0)",
            ),
            (
                "word.stl",
                b"solid q\nfacet normal 0 0 1\nouter loop\nvertex 0 0 0\nvertex 1 0 0\n\
                  vertex 1 1 0\nendloop\nendfacet\nfacet normal 0 0 1\nouter loop\n\
                  vertex 0 0 0\nvertex 1 0 x\n"
                    .to_vec(),
                "line 12: vertex coordinate \"x\" is not a number (triangle 1)",
            ),
            ("shortv.obj", b"v 0 0\nf 1 1 1\n".to_vec(), "fewer than 3"),
            (
                "nan.stl",
                ascii_stl(&cube, "solid x")
                    .replace("vertex 1e0", "vertex NaN")
                    .into_bytes(),
                "finite",
            ),
            (
                "bad.stl",
                b"solid x\nfacet normal 0 0 1\nouter loop\nvertex 1 2\n".to_vec(),
                "ASCII STL",
            ),
            ("noend.stl", b"solid x\n".to_vec(), "ASCII STL"),
        ];
        for (name, bytes, needle) in cases {
            let file = TempFile::with_bytes(name, &bytes);
            assert_parse_error(load_mesh(&file.0, &opts), &file.0, needle);
        }

        // A binary file whose header starts with "solid", cut short: a binary size mismatch.
        let mut solid_header = binary.clone();
        solid_header[..6].copy_from_slice(b"solid ");
        solid_header.truncate(solid_header.len() - 50);
        let file = TempFile::with_bytes("solid_truncated.stl", &solid_header);
        assert_parse_error(
            load_mesh(&file.0, &opts),
            &file.0,
            "binary STL truncated: the header announces 12 triangles (684 bytes) but the file \
             has 634 bytes",
        );
        // Binary non-finite coordinates are refused naming the triangle, vertex and axis.
        let mut nan = binary.clone();
        nan[84 + 50 * 5 + 12 + 12 + 4..][..4].copy_from_slice(&f32::INFINITY.to_le_bytes());
        let file = TempFile::with_bytes("inf_binary.stl", &nan);
        assert_parse_error(
            load_mesh(&file.0, &opts),
            &file.0,
            "binary STL: triangle 5, vertex 1: coordinate y is inf, not a finite number",
        );
        // Files with no faces are empty meshes.
        for (name, bytes) in [
            ("nofaces.obj", &b"# nothing\nv 0 0 0\n"[..]),
            ("nofacets.stl", &b"solid x\nendsolid x\n"[..]),
        ] {
            let file = TempFile::with_bytes(name, bytes);
            assert!(matches!(
                load_mesh(&file.0, &opts),
                Err(LoadError::Invalid {
                    source: MeshError::Empty { .. },
                    ..
                })
            ));
        }
    }

    #[test]
    fn random_bytes_never_panic() {
        let mut rng = ChaCha8Rng::seed_from_u64(11);
        let mut binary = Vec::new();
        write_stl(&cube(), &mut binary).unwrap();
        let obj = {
            let mut v = Vec::new();
            write_obj(&cube(), &mut v).unwrap();
            v
        };
        for round in 0..200 {
            // Corrupt valid files in a few random places, and try pure noise.
            let mut bytes = match round % 3 {
                0 => binary.clone(),
                1 => obj.clone(),
                _ => (0..rng.random_range(0..300))
                    .map(|_| rng.random::<u8>())
                    .collect(),
            };
            for _ in 0..rng.random_range(1..6) {
                if bytes.is_empty() {
                    break;
                }
                let i = rng.random_range(0..bytes.len());
                bytes[i] = match rng.random_range(0..4) {
                    0 => b'-',
                    1 => b'/',
                    2 => b'9',
                    _ => rng.random::<u8>(),
                };
            }
            if rng.random::<bool>() && !bytes.is_empty() {
                let cut = rng.random_range(0..bytes.len());
                bytes.truncate(cut);
            }
            for format in [MeshFormat::Obj, MeshFormat::Stl] {
                // Errors are fine; panics are not. Valid results must be valid meshes.
                if let Ok((mesh, _)) = parse_mesh(
                    &bytes,
                    format,
                    &MeshOptions::default(),
                    Path::new(MEMORY_PATH),
                ) {
                    assert!(mesh.vertices().iter().all(|v| v.is_finite()));
                }
            }
        }
    }
}
