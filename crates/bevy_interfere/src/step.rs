//! The fixed step: the simulation advances once, with the contact stage of the selected
//! [`Backend`]. The CPU stage is the simulation's own; other backends register their stage in
//! [`ContactBackends`] (the GPU plugin does, at start-up), so this module knows no backend's
//! internals. A backend that is selected but not registered falls back to the CPU with a
//! warning; a stage that fails in a step falls back for that step inside the simulation.

use crate::settings::{Backend, PhysicsSettings, PhysicsStats};
use crate::world::PhysicsWorld;
use bevy::platform::collections::HashMap;
use bevy::prelude::*;
use interfere_dynamics::ContactStage;
use std::sync::Mutex;
use std::time::Instant;

/// Contact stages of the non-CPU backends, by backend.
#[derive(Resource, Default)]
pub struct ContactBackends {
    stages: HashMap<Backend, Mutex<Box<dyn ContactStage>>>,
}

impl ContactBackends {
    /// Registers (or replaces) the stage that runs `backend`.
    pub fn register(&mut self, backend: Backend, stage: Box<dyn ContactStage>) {
        self.stages.insert(backend, Mutex::new(stage));
    }

    /// Whether `backend` has a stage (the CPU always has).
    pub fn has(&self, backend: Backend) -> bool {
        backend == Backend::Cpu || self.stages.contains_key(&backend)
    }

    /// Runs `f` on `backend`'s stage, if it has one.
    pub fn with<R>(
        &self,
        backend: Backend,
        f: impl FnOnce(&mut dyn ContactStage) -> R,
    ) -> Option<R> {
        let stage = self.stages.get(&backend)?;
        let mut guard = stage.lock().unwrap_or_else(|poison| poison.into_inner());
        Some(f(guard.as_mut()))
    }
}

/// Run condition: whether this fixed step simulates (not paused, or a single step is queued).
pub(crate) fn physics_active(settings: Res<PhysicsSettings>) -> bool {
    !settings.paused || settings.single_steps > 0
}

/// Step: one fixed step of the simulation with the selected backend's contact stage.
pub(crate) fn step(
    mut pw: ResMut<PhysicsWorld>,
    mut backend: ResMut<Backend>,
    backends: Res<ContactBackends>,
    mut stats: ResMut<PhysicsStats>,
    mut warned: Local<Option<Backend>>,
    mut falling_back: Local<bool>,
) {
    let start = Instant::now();
    let pw = &mut *pw;
    let chosen = *backend;
    let ran = chosen != Backend::Cpu
        && backends
            .with(chosen, |stage| pw.sim.step_with(stage))
            .is_some();
    if !ran {
        if chosen != Backend::Cpu {
            if *warned != Some(chosen) {
                warn!(
                    "interfere: backend {} is not available (its plugin is missing or found no \
                     GPU); using the CPU",
                    chosen.name()
                );
                *warned = Some(chosen);
            }
            *backend = Backend::Cpu;
        }
        pw.sim.step();
    }
    stats.backend = chosen;
    stats.step = pw.sim.stats().clone();
    // A failed GPU job: this step ran on the CPU. Warn when it starts failing, not every step.
    match &stats.step.fallback {
        Some(why) if !*falling_back => {
            warn!(
                "interfere: {why}; this step ran on the CPU (and so will the next until it recovers)"
            );
            *falling_back = true;
        }
        None if *falling_back && ran => {
            info!("interfere: the {} backend answers again", chosen.name());
            *falling_back = false;
        }
        _ => {}
    }
    stats.step_ms = start.elapsed().as_secs_f64() * 1e3;
}
