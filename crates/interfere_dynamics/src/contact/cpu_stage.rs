//! The CPU contact stage: the exact narrow phase (OBBTree and exact triangle tests, CInDeR
//! Theorem 1; [`crate::contact::narrow_phase`]) followed by the CPU volume stage (the exact intersection
//! volume, or the ray sampling of Wang–Faure–Pai 2012 §2.2–5; [`crate::contact::volume_stage`]). Kept out
//! of [`crate::contact::stage`] so that the traits' module imports neither implementation.

use crate::contact::narrow_phase::CpuNarrowPhase;
use crate::contact::speculative::{LookAhead, add_speculative_contacts};
use crate::contact::stage::{
    ContactStage, NarrowPhase, StageError, StageInput, StageOutput, VolumeStage,
};
use crate::contact::volume_stage::CpuVolumeStage;

/// The CPU contact stage: a narrow phase, then volumes.
pub struct CpuContacts {
    /// The narrow phase.
    pub narrow: Box<dyn NarrowPhase>,
    /// The volume stage.
    pub volume: Box<dyn VolumeStage>,
    /// Which moving pairs also get speculative contacts (`crate::contact::speculative`; every
    /// moving pair by default). The blocking GPU stage turns it off for the pairs it leaves to
    /// the CPU and looks ahead for all its candidates at once after its answer.
    pub speculative: LookAhead,
}

impl Default for CpuContacts {
    fn default() -> Self {
        Self {
            narrow: Box::new(CpuNarrowPhase::default()),
            volume: Box::new(CpuVolumeStage::default()),
            speculative: LookAhead::Moving,
        }
    }
}

impl ContactStage for CpuContacts {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn run(&mut self, input: &StageInput<'_>, out: &mut StageOutput) -> Result<(), StageError> {
        let start = std::time::Instant::now();
        let mut pairs = Vec::new();
        self.narrow.interfering(input, &mut pairs);
        let narrow_ms = start.elapsed().as_secs_f64() * 1e3;
        let start = std::time::Instant::now();
        let first = out.pairs.len();
        let rays = self.volume.contacts(input, pairs, &mut out.pairs);
        // Contacts the step's motion would make (speculative: see `contact::speculative`).
        add_speculative_contacts(input, &mut out.pairs, &mut *self.narrow, self.speculative);
        let r = &mut out.report;
        r.narrow = self.narrow.name();
        r.volume = self.volume.name();
        r.narrow_ms += narrow_ms;
        r.volume_ms += start.elapsed().as_secs_f64() * 1e3;
        r.rays += rays;
        r.pairs_refused += out.pairs[first..]
            .iter()
            .filter(|p| p.refused.is_some())
            .count();
        Ok(())
    }
}
