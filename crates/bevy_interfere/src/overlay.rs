//! The in-editor debug panel (bevy_egui, feature `overlay`): switch the narrow-phase backend,
//! set the volume sampling (uniform spacing, or the adaptive EBPI tolerance, ray budget and
//! resolution of Wang–Faure–Pai 2012 §3–5) and the CInDeR resolution, pause and single-step, toggle the debug
//! gizmos, inspect one body, and read the per-stage timings and counts of the last step.
//!
//! Nothing here runs while [`OverlayState::visible`] is false (the panel system has a run
//! condition), so the overlay costs nothing when it is off.

use crate::components::{AngularVelocity, LinearVelocity, RigidBody, Sleeping};
use crate::debug_gizmos::InterfereGizmos;
#[cfg(feature = "gpu")]
use crate::gpu_backend::{GpuSettings, GpuSupport};
use crate::settings::{Backend, PhysicsSettings, PhysicsStats};
use crate::world::PhysicsWorld;
use bevy::gizmos::config::GizmoConfigStore;
use bevy::prelude::*;
use bevy_egui::{EguiContexts, EguiPlugin, EguiPrimaryContextPass, egui};
use interfere_dynamics::{AdaptiveSampling, MeshSpacing, VolumeMethod};
use interfere_geometry::Tolerance;

/// Whether the panel is shown and which body it inspects.
#[derive(Resource, Clone, Debug, Default, PartialEq)]
pub struct OverlayState {
    /// Show the panel (toggle with F3 where there is a keyboard).
    pub visible: bool,
    /// The inspected body.
    pub selected: Option<Entity>,
}

/// Adds the panel (and `EguiPlugin` if the app has none).
#[derive(Default)]
pub struct InterfereOverlayPlugin;

impl Plugin for InterfereOverlayPlugin {
    fn build(&self, app: &mut App) {
        if !app.is_plugin_added::<EguiPlugin>() {
            app.add_plugins(EguiPlugin::default());
        }
        app.init_resource::<OverlayState>()
            .add_systems(Update, toggle_with_f3)
            .add_systems(
                EguiPrimaryContextPass,
                panel.run_if(|s: Res<OverlayState>| s.visible),
            );
    }
}

/// The volume method: exact (no knob), uniform rays (with the spacing) or adaptive EBPI
/// sampling (with the tolerance, ray budget and EBPI resolution).
fn volume_sampling_controls(ui: &mut egui::Ui, settings: &mut PhysicsSettings) {
    #[derive(PartialEq, Clone, Copy)]
    enum Kind {
        Exact,
        Uniform,
        Adaptive,
    }
    let mut kind = match settings.volume {
        VolumeMethod::Exact => Kind::Exact,
        VolumeMethod::Uniform { .. } => Kind::Uniform,
        VolumeMethod::Adaptive(_) => Kind::Adaptive,
    };
    ui.horizontal(|ui| {
        ui.label("volume (CPU)");
        ui.radio_value(&mut kind, Kind::Exact, "exact");
        ui.radio_value(&mut kind, Kind::Uniform, "uniform rays");
        ui.radio_value(&mut kind, Kind::Adaptive, "adaptive (EBPI)");
    });
    match (kind, &settings.volume) {
        (Kind::Exact, VolumeMethod::Exact)
        | (Kind::Uniform, VolumeMethod::Uniform { .. })
        | (Kind::Adaptive, VolumeMethod::Adaptive(_)) => {}
        (Kind::Exact, _) => settings.volume = VolumeMethod::Exact,
        (Kind::Uniform, _) => {
            settings.volume = VolumeMethod::Uniform {
                spacing: MeshSpacing::default(),
            }
        }
        (Kind::Adaptive, _) => {
            settings.volume = VolumeMethod::Adaptive(AdaptiveSampling::default());
        }
    }
    match &mut settings.volume {
        VolumeMethod::Exact => {
            ui.label("exact intersection volume: nothing to tune");
        }
        VolumeMethod::Uniform { spacing } => match spacing {
            MeshSpacing::Relative(f) => {
                ui.add(
                    egui::Slider::new(f, 0.01..=0.5)
                        .logarithmic(true)
                        .text("ray spacing (× size)"),
                );
            }
            MeshSpacing::Absolute(h) => {
                ui.add(
                    egui::Slider::new(h, 1e-5..=1.0)
                        .logarithmic(true)
                        .text("ray spacing"),
                );
            }
        },
        VolumeMethod::Adaptive(a) => {
            match &mut a.tolerance {
                Tolerance::Relative(t) => ui.add(
                    egui::Slider::new(t, 1e-6..=0.1)
                        .logarithmic(true)
                        .text("volume tolerance (× smaller volume)"),
                ),
                Tolerance::Absolute(t) => ui.add(
                    egui::Slider::new(t, 1e-12..=1.0)
                        .logarithmic(true)
                        .text("volume tolerance (absolute)"),
                ),
            };
            ui.add(
                egui::Slider::new(&mut a.ray_budget, 16..=1 << 16)
                    .logarithmic(true)
                    .text("rays per pair"),
            );
            ui.add(
                egui::Slider::new(&mut a.finest_resolution, 8..=256)
                    .logarithmic(true)
                    .text("EBPI resolution"),
            );
        }
    }
}

fn toggle_with_f3(keys: Option<Res<ButtonInput<KeyCode>>>, mut state: ResMut<OverlayState>) {
    if keys.is_some_and(|k| k.just_pressed(KeyCode::F3)) {
        state.visible = !state.visible;
    }
}

/// What the body inspector reads of each body.
type BodyView<'a> = (
    Entity,
    &'a RigidBody,
    &'a Transform,
    &'a LinearVelocity,
    &'a AngularVelocity,
    Option<&'a Name>,
    Has<Sleeping>,
);

/// The GPU backend's resources the panel reads and edits.
#[cfg(feature = "gpu")]
type GpuParams<'w> = (Option<Res<'w, GpuSupport>>, Option<ResMut<'w, GpuSettings>>);
/// Built without the `gpu` feature: nothing to show.
#[cfg(not(feature = "gpu"))]
type GpuParams<'w> = ();

/// Which adapter the GPU backends run on, or why they cannot.
#[cfg(feature = "gpu")]
fn gpu_status(ui: &mut egui::Ui, (support, _): &GpuParams<'_>) {
    if let Some(s) = support {
        match (&s.adapter, &s.unavailable) {
            (_, Some(why)) => ui.colored_label(egui::Color32::LIGHT_RED, why),
            (Some(a), None) => ui.label(format!("GPU: {a}")),
            (None, None) => ui.label("GPU: not set up yet"),
        };
    }
}

#[cfg(not(feature = "gpu"))]
fn gpu_status(ui: &mut egui::Ui, _: &GpuParams<'_>) {
    ui.label("GPU: not built (the `gpu` feature is off)");
}

/// The GPU backends' resolution, ray spacing and exact confirmation.
#[cfg(feature = "gpu")]
fn gpu_controls(ui: &mut egui::Ui, (_, gpu_settings): GpuParams<'_>) {
    if let Some(mut gpu) = gpu_settings {
        ui.add(
            egui::Slider::new(&mut gpu.cinder_resolution, 32..=2048)
                .logarithmic(true)
                .text("CInDeR resolution"),
        );
        ui.add(
            egui::Slider::new(&mut gpu.volume_spacing, 0.01..=0.5)
                .logarithmic(true)
                .text("GPU ray spacing (× size)"),
        );
        ui.checkbox(&mut gpu.exact_confirm, "confirm GPU pairs exactly");
    }
}

#[cfg(not(feature = "gpu"))]
fn gpu_controls(_: &mut egui::Ui, _: GpuParams<'_>) {}

#[allow(clippy::too_many_arguments)]
fn panel(
    mut contexts: EguiContexts,
    mut state: ResMut<OverlayState>,
    mut settings: ResMut<PhysicsSettings>,
    mut backend: ResMut<Backend>,
    stats: Res<PhysicsStats>,
    gpu: GpuParams<'_>,
    pw: Res<PhysicsWorld>,
    gizmo_store: Option<ResMut<GizmoConfigStore>>,
    bodies: Query<BodyView<'static>>,
    joints: Query<(Entity, &crate::JointForces, Option<&Name>)>,
) -> Result {
    let ctx = contexts.ctx_mut()?;
    egui::Window::new("Interfere")
        .default_pos(egui::pos2(8.0, 8.0))
        .default_width(300.0)
        .show(ctx, |ui| {
            ui.heading("Contacts");
            ui.horizontal(|ui| {
                for b in [Backend::Cpu, Backend::Gpu, Backend::GpuBlocking] {
                    ui.radio_value(&mut *backend, b, b.name());
                }
            });
            gpu_status(ui, &gpu);
            volume_sampling_controls(ui, &mut settings);
            gpu_controls(ui, gpu);
            ui.checkbox(
                &mut settings.all_triangle_pairs,
                "report all triangle pairs",
            );
            ui.horizontal(|ui| {
                ui.checkbox(&mut settings.paused, "paused");
                if ui.button("step").clicked() {
                    settings.single_steps += 1;
                }
            });

            if let Some(mut store) = gizmo_store {
                ui.separator();
                ui.heading("Debug drawing");
                let (config, ext) = store.config_mut::<InterfereGizmos>();
                ui.checkbox(&mut config.enabled, "gizmos");
                ui.checkbox(&mut ext.contacts, "contact points and normals");
                ui.checkbox(&mut ext.interfering_triangles, "interfering triangles");
                ui.checkbox(&mut ext.world_boxes, "world boxes");
                ui.checkbox(&mut ext.volume_gradients, "volume gradients");
                ui.checkbox(&mut ext.joints, "joints");
                ui.horizontal(|ui| {
                    ui.checkbox(&mut ext.ray_samples, "ray samples");
                    ui.checkbox(&mut ext.sample_density, "sampling density");
                });
                ui.add(
                    egui::DragValue::new(&mut ext.sampled_pairs)
                        .range(0..=256)
                        .prefix("recast pairs: "),
                );
                let mut show_tree = ext.tree_level.is_some();
                let mut level = ext.tree_level.unwrap_or(0) as u32;
                ui.horizontal(|ui| {
                    ui.checkbox(&mut show_tree, "BVH level");
                    ui.add(egui::DragValue::new(&mut level).range(0..=24));
                });
                ext.tree_level = show_tree.then_some(level as usize);
            }

            ui.separator();
            ui.heading("Last step");
            egui::Grid::new("interfere-stats")
                .striped(true)
                .show(ui, |ui| {
                    let mut row = |k: &str, v: String| {
                        ui.label(k);
                        ui.label(v);
                        ui.end_row();
                    };
                    let st = &stats.step;
                    row("backend asked", stats.backend.name().to_string());
                    row("narrow phase ran on", st.narrow_backend.to_string());
                    row("volumes ran on", st.volume_backend.to_string());
                    if let Some(why) = &st.fallback {
                        row("CPU fallback", why.clone());
                    }
                    row(
                        "bodies (asleep)",
                        format!("{} ({})", st.bodies, st.sleeping),
                    );
                    row("candidate pairs", st.candidate_pairs.to_string());
                    row("interfering pairs", st.interfering_pairs.to_string());
                    row(
                        "GPU latency",
                        st.latency_steps
                            .map_or("-".into(), |n| format!("{n} steps")),
                    );
                    row("latency pairs (CPU)", st.latency_pairs.to_string());
                    row("volume contacts", st.volume_contacts.to_string());
                    row("rays", st.rays.to_string());
                    row("sync", format!("{:.3} ms", stats.sync_ms));
                    row("broad phase", format!("{:.3} ms", st.broad_phase_ms));
                    row("narrow phase", format!("{:.3} ms", st.narrow_phase_ms));
                    row(
                        "GPU (end to end)",
                        st.gpu_ms.map_or("-".into(), |t| format!("{t:.3} ms")),
                    );
                    row("volume", format!("{:.3} ms", st.volume_ms));
                    row("solver", format!("{:.3} ms", st.solver_ms));
                    row(
                        "solver sweeps / updates",
                        format!("{} / {}", st.solver_sweeps, st.solver_updates),
                    );
                    row("writeback", format!("{:.3} ms", stats.writeback_ms));
                    row("total", format!("{:.3} ms", stats.total_ms()));
                });

            ui.separator();
            ui.heading("Body");
            let label = |e: Entity, n: Option<&Name>| {
                n.map_or_else(|| e.to_string(), |n| format!("{n} ({e})"))
            };
            let current = state
                .selected
                .and_then(|e| bodies.get(e).ok())
                .map_or("none".to_string(), |(e, .., n, _)| label(e, n));
            egui::ComboBox::from_id_salt("interfere-body")
                .selected_text(current)
                .show_ui(ui, |ui| {
                    for (e, .., n, _) in bodies.iter() {
                        ui.selectable_value(&mut state.selected, Some(e), label(e, n));
                    }
                });
            if let Some((e, kind, t, lin, ang, _, asleep)) =
                state.selected.and_then(|e| bodies.get(e).ok())
            {
                ui.label(format!(
                    "{kind:?}{}",
                    if asleep { ", sleeping" } else { "" }
                ));
                ui.label(format!("position {:.4}", t.translation));
                ui.label(format!("velocity {:.4} m/s", lin.0));
                ui.label(format!("angular {:.4} rad/s", ang.0));
                if let Some(b) = pw.body(e) {
                    ui.label(format!("mass {:.4}", b.mass()));
                }
                let touching: Vec<String> = pw
                    .interfering_pairs()
                    .into_iter()
                    .filter_map(|(a, b)| (a == e).then_some(b).or((b == e).then_some(a)))
                    .map(|o| o.to_string())
                    .collect();
                ui.label(format!("interferes with: {}", touching.join(", ")));
            }

            if !joints.is_empty() {
                ui.separator();
                ui.heading("Joints");
                egui::Grid::new("interfere-joints")
                    .striped(true)
                    .show(ui, |ui| {
                        ui.label("joint");
                        ui.label("force N");
                        ui.label("torque N·m");
                        ui.label("motor");
                        ui.end_row();
                        for (e, f, n) in joints.iter() {
                            ui.label(n.map_or_else(|| e.to_string(), |n| format!("{n} ({e})")));
                            if f.broken {
                                ui.label("broken");
                                ui.label("-");
                                ui.label("-");
                            } else {
                                ui.label(format!("{:.2}", f.force.length()));
                                ui.label(format!("{:.2}", f.torque.length()));
                                ui.label(format!("{:.2}", f.motor_force));
                            }
                            ui.end_row();
                        }
                    });
            }
        });
    Ok(())
}
