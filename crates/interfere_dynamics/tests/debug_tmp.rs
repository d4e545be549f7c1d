use interfere_dynamics::*;

#[test]
#[ignore]
fn obstacle_trace() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/scenes");
    let file = std::env::var("SCENE").unwrap_or("small_obstacle_adaptive.json".into());
    let scene = Scene::load(&dir.join(&file)).unwrap();
    let mut built = scene.build().unwrap();
    let cube = built.names.iter().position(|n| n == "cube").unwrap();
    let h = built.handles[cube];
    let sim = &mut built.simulation;
    for step in 0..240 {
        if step == 126 {
            let b = sim.body(h).unwrap();
            println!("STATE before step 125: pos {:?} q {:?} v {:?} w {:?}", b.position, b.orientation, b.linear_velocity, b.angular_velocity);
            println!("mesh pose {:?}", b.mesh_pose());
        }
        sim.step();
        if step == 126 {
            for p in sim.pair_contacts() {
                println!("pair ({},{}) V {:e} lin {:?} ang {:?} point {:?}", p.a, p.b, p.volume, p.linear, p.angular, p.point);
                for q in &p.parts {
                    println!("   part V {:e} lin {:?} |lin| {:e} ang {:?} depth V/|lin| {:e}", q.volume, q.linear, q.linear.length(), q.angular, q.volume / q.linear.length());
                }
            }
        }
        let b = sim.body(h).unwrap();
        let pcs: Vec<String> = sim
            .pair_contacts()
            .iter()
            .map(|p| {
                format!(
                    "({},{}) V {:.3e} |g| {:.3e} parts {} [{}] rays {}",
                    p.a,
                    p.b,
                    p.volume,
                    p.linear.length(),
                    p.parts.len(),
                    p.parts.iter().map(|q| format!("{:.2e}", q.volume)).collect::<Vec<_>>().join(","),
                    p.rays
                )
            })
            .collect();
        println!(
            "{step} p {:.5?} v {:.4?} w {:.4?} vc {} sleeping {} | {}",
            b.position,
            b.linear_velocity,
            b.angular_velocity,
            sim.stats().volume_contacts,
            b.sleeping,
            pcs.join(" ; ")
        );
    }
}

#[test]
#[ignore]
fn degenerate_split_repro() {
    use interfere_geometry::glam::{DQuat, DVec3, Vec3};
    use interfere_geometry::shapes::cuboid;
    use interfere_geometry::Tolerance;
    use std::sync::Arc;
    let mut sim = Simulation::new(SimulationSettings {
        contact: ContactSettings {
            volume: VolumeMethod::Adaptive(AdaptiveSampling {
                tolerance: Tolerance::Relative(1e-4),
                finest_resolution: 64,
                ray_budget: 512,
            }),
            ..ContactSettings::default()
        },
        ..SimulationSettings::default()
    })
    .unwrap();
    let slab = Arc::new(MeshShape::new(cuboid(Vec3::new(1.0, 0.05, 0.5))).unwrap());
    let cube = Arc::new(MeshShape::new(cuboid(Vec3::splat(0.1))).unwrap());
    sim.insert(RigidBody::fixed(DVec3::new(0.3, -0.05, 0.0), DQuat::IDENTITY).unwrap(), Some(Collider::mesh(slab))).unwrap();
    let q = DQuat::from_xyzw(-8.270616389916474e-5, 0.0011111087990803381, -0.005293896508991303, 0.9999853665212703);
    let at = DVec3::new(-0.10088705214570608, 0.10104219007525983, 3.919971980075047e-5);
    let h = sim.insert(RigidBody::dynamic(&cube.mass_at(500.0), at, q).unwrap(), Some(Collider::mesh(cube))).unwrap();
    println!("mesh pose {:?}", sim.body(h).unwrap().mesh_pose().translation);
    let input = sim.stage_input(&[]);
    let p = interfere_dynamics::narrow_phase::exact_pair(&input, 0, 1, false).unwrap();
    let c = interfere_dynamics::volume_stage::pair_contact(&input, p);
    println!("V {:e} |dV/dx_b| {:e} rays {}", c.volume, c.linear.length(), c.rays);
    for q in &c.parts {
        println!("  part V {:e} |lin| {:e} depth {:e}", q.volume, q.linear.length(), q.volume / q.linear.length());
    }
    let before = sim.body(h).unwrap().position;
    sim.step();
    println!("moved {:e} m in one step", (sim.body(h).unwrap().position - before).length());
}

#[test]
#[ignore]
fn degenerate_split_points() {
    use interfere_geometry::glam::{DQuat, DVec3, Vec3};
    use interfere_geometry::shapes::cuboid;
    use interfere_geometry::Tolerance;
    use std::sync::Arc;
    let method = VolumeMethod::Adaptive(AdaptiveSampling {
        tolerance: Tolerance::Relative(1e-4),
        finest_resolution: 64,
        ray_budget: 512,
    });
    let mut sim = Simulation::new(SimulationSettings {
        contact: ContactSettings { volume: method, ..ContactSettings::default() },
        ..SimulationSettings::default()
    })
    .unwrap();
    let slab = Arc::new(MeshShape::new(cuboid(Vec3::new(1.0, 0.05, 0.5))).unwrap());
    let cube = Arc::new(MeshShape::new(cuboid(Vec3::splat(0.1))).unwrap());
    sim.insert(RigidBody::fixed(DVec3::new(0.3, -0.05, 0.0), DQuat::IDENTITY).unwrap(), Some(Collider::mesh(slab))).unwrap();
    let q = DQuat::from_xyzw(-8.270616389916474e-5, 0.0011111087990803381, -0.005293896508991303, 0.9999853665212703);
    let at = DVec3::new(-0.10088705214570608, 0.10104219007525983, 3.919971980075047e-5);
    sim.insert(RigidBody::dynamic(&cube.mass_at(500.0), at, q).unwrap(), Some(Collider::mesh(cube))).unwrap();
    let input = sim.stage_input(&[]);
    let (r, _frame) = interfere_dynamics::volume_stage::sampled_volume(&input, 0, 1, method).unwrap();
    let r = r.unwrap();
    println!("volume {:e} axis {:?} points {} rays {}", r.volume, r.axis_volumes, r.points.len(), r.ray_count);
    let mut per_axis = [0usize; 3];
    for line in r.lines() {
        let b: Vec<_> = line.iter().filter(|p| p.on_b).collect();
        per_axis[line[0].axis as usize] += 1;
        if line[0].axis != 1 {
            println!("axis {} n_on_b {} ends {:?}", line[0].axis, b.len(), line.iter().map(|p| (p.on_b, p.normal, p.area)).collect::<Vec<_>>());
        }
    }
    println!("lines per axis {per_axis:?}");
}

fn stack_sim(substeps: u32, hz: f64) -> (Simulation, Vec<BodyHandle>) {
    use interfere_geometry::glam::{DQuat, DVec3, Vec3};
    use interfere_geometry::shapes::cuboid;
    use std::sync::Arc;
    let mut sim = Simulation::new(SimulationSettings {
        world: WorldSettings { gravity: DVec3::new(0.0, 0.0, -9.81), dt: 1.0 / hz, substeps, solver: SolverSettings::default() },
        contact: ContactSettings::default(),
        sleep: SleepSettings::NEVER,
    }).unwrap();
    let mat = Material::new(0.6, 0.0);
    let slab = Arc::new(MeshShape::new(cuboid(Vec3::new(2.0, 2.0, 0.5))).unwrap());
    sim.insert(RigidBody::fixed(DVec3::new(0.0, 0.0, -0.5), DQuat::IDENTITY).unwrap().with_material(mat), Some(Collider::mesh(slab))).unwrap();
    let half = Vec3::new(0.5, 0.5, 0.25);
    let bx = Arc::new(MeshShape::new(cuboid(half)).unwrap());
    let mut ids = Vec::new();
    let n: usize = std::env::var("N").ok().and_then(|s| s.parse().ok()).unwrap_or(5);
    for i in 0..n {
        let ov: f64 = std::env::var("OVERLAP").ok().and_then(|s| s.parse().ok()).unwrap_or(0.0);
        let z = f64::from(half.z) * (2 * i + 1) as f64 - ov * (i + 1) as f64;
        let b = RigidBody::dynamic(&bx.mass_at(500.0), DVec3::new(0.0, 0.0, z), DQuat::IDENTITY).unwrap().with_material(mat);
        ids.push(sim.insert(b, Some(Collider::mesh(bx.clone()))).unwrap());
    }
    (sim, ids)
}

#[test]
#[ignore]
fn stack_trace() {
    let substeps: u32 = std::env::var("SUB").ok().and_then(|s| s.parse().ok()).unwrap_or(4);
    let hz: f64 = std::env::var("HZ").ok().and_then(|s| s.parse().ok()).unwrap_or(60.0);
    let (mut sim, ids) = stack_sim(substeps, hz);
    let start: Vec<_> = ids.iter().map(|&h| sim.body(h).unwrap().position).collect();
    let steps = (10.0 * hz) as usize;
    for step in 0..steps {
        sim.step();
        if step < std::env::var("FIRST").ok().and_then(|s| s.parse().ok()).unwrap_or(10) || step % (hz as usize / 2) == 0 || step == steps - 1 {
            let d: Vec<String> = ids.iter().enumerate().map(|(k, &h)| {
                let b = sim.body(h).unwrap();
                let tilt = b.orientation.to_axis_angle().1;
                format!("{:+.2e}/{:+.2e}/{:.1e}", b.position.z - start[k].z, (b.position - start[k]).truncate().length(), tilt)
            }).collect();
            let pcs: Vec<String> = sim.pair_contacts().iter().map(|p| format!("({},{}) V{:.2e} n{} r{} [{}]", p.a, p.b, p.volume, p.parts.len(), p.rays, p.parts.iter().map(|q| format!("{:.1e}", q.volume/q.linear.length())).collect::<Vec<_>>().join(","))).collect();
            println!("{step} {} | vc {} | {}", d.join(" "), sim.stats().volume_contacts, pcs.join(" "));
        }
    }
}

#[test]
#[ignore]
fn stack_detail() {
    let (mut sim, ids) = stack_sim(4, 60.0);
    let start: Vec<_> = ids.iter().map(|&h| sim.body(h).unwrap().position).collect();
    for step in 0..40 {
        let zs: Vec<String> = ids.iter().enumerate().map(|(k, &h)| format!("{:+.2e}", sim.body(h).unwrap().position.z - start[k].z)).collect();
        let vz: Vec<String> = ids.iter().map(|&h| format!("{:+.2e}", sim.body(h).unwrap().linear_velocity.z)).collect();
        sim.step();
        let fresh: Vec<String> = sim.pair_contacts().iter().map(|p| format!("({},{})V{:.1e}", p.a, p.b, p.volume)).collect();
        let mut last: std::collections::BTreeMap<(usize, usize), (usize, f64)> = Default::default();
        for v in &sim.world().last_contacts().volumes {
            let e = last.entry((v.body_a, v.body_b)).or_default();
            e.0 += 1;
            e.1 += v.volume;
        }
        println!("{step} start z [{}] vz [{}] | cand {:?} | fresh {} | vc {} | last substep {:?}", zs.join(" "), vz.join(" "), sim.candidate_pairs(), fresh.join(" "), sim.stats().volume_contacts, last);
    }
}

#[test]
#[ignore]
fn stack_measure() {
    for (sub, hz) in [(1u32, 240.0), (2, 240.0), (4, 240.0), (1, 120.0), (2, 120.0), (1, 180.0), (3, 180.0), (4,120.0), (8, 120.0)] {
        let (mut sim, ids) = stack_sim(sub, hz);
        let start: Vec<_> = ids.iter().map(|&h| sim.body(h).unwrap().position).collect();
        for _ in 0..(10.0 * hz) as usize { sim.step(); }
        let (mut worst, mut tilt) = (0.0f64, 0.0f64);
        for (k, &h) in ids.iter().enumerate() {
            let b = sim.body(h).unwrap();
            worst = worst.max((b.position - start[k]).length());
            tilt = tilt.max(b.orientation.to_axis_angle().1.abs());
        }
        println!("sub {sub} hz {hz}: drift {worst:.3e} tilt {tilt:.3e}");
    }
}
