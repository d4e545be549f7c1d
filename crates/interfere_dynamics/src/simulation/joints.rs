//! Joints in the [`Simulation`]: inserting, changing and removing them by handle, what they
//! did in the last step, and how they take part in the rest of the step (the connected bodies'
//! pair leaves the broad phase unless the joint says they collide; joined bodies form one
//! sleeping island). The joint model is in [`crate::joint`], its solver rows in
//! `crate::solver::joint_rows`.

use crate::body::BodyKind;
use crate::contact::BodyId;
use crate::joint::{Joint, JointError, JointHandle, JointState};
use crate::simulation::{BodyHandle, Simulation};
use crate::solver::joint_rows::{JOINT_ROWS, JointSlot};
use crate::solver::sleeping::Islands;

impl Simulation {
    /// Connects bodies `a` and `b` with `joint` (its frames are on `a` and `b` in that order).
    /// Both bodies wake.
    pub fn insert_joint(
        &mut self,
        a: BodyHandle,
        b: BodyHandle,
        joint: Joint,
    ) -> Result<JointHandle, JointError> {
        joint.validate()?;
        let ia = self.check(a).map_err(|_| JointError::NoBody)?;
        let ib = self.check(b).map_err(|_| JointError::NoBody)?;
        if ia == ib {
            return Err(JointError::SameBody);
        }
        let joints = &mut self.world.joints;
        let index = match joints.iter().position(|s| !s.alive) {
            Some(i) => i,
            None => {
                joints.push(JointSlot {
                    a: 0,
                    b: 0,
                    joint,
                    state: JointState::default(),
                    warm: [0.0; JOINT_ROWS],
                    alive: false,
                    generation: 0,
                });
                joints.len() - 1
            }
        };
        let slot = &mut joints[index];
        slot.a = ia;
        slot.b = ib;
        slot.joint = joint;
        slot.state = JointState::default();
        slot.warm = [0.0; JOINT_ROWS];
        slot.alive = true;
        slot.generation = slot.generation.wrapping_add(1);
        let handle = JointHandle {
            index: index as u32,
            generation: slot.generation,
        };
        self.wake_id(ia);
        self.wake_id(ib);
        Ok(handle)
    }

    fn joint_slot(&self, h: JointHandle) -> Result<usize, JointError> {
        match self.world.joints.get(h.index as usize) {
            Some(s) if s.alive && s.generation == h.generation => Ok(h.index as usize),
            _ => Err(JointError::NoJoint(h)),
        }
    }

    /// Removes a joint; its bodies wake.
    pub fn remove_joint(&mut self, h: JointHandle) -> Result<Joint, JointError> {
        let i = self.joint_slot(h)?;
        let slot = &mut self.world.joints[i];
        slot.alive = false;
        let (a, b, joint) = (slot.a, slot.b, slot.joint);
        self.wake_id(a);
        self.wake_id(b);
        Ok(joint)
    }

    /// Replaces a joint's parameters (a new motor target, limit or compliance), keeping its
    /// bodies, warm start and state; its bodies wake when it changed.
    pub fn set_joint(&mut self, h: JointHandle, joint: Joint) -> Result<(), JointError> {
        joint.validate()?;
        let i = self.joint_slot(h)?;
        let slot = &mut self.world.joints[i];
        if slot.joint != joint {
            slot.joint = joint;
            let (a, b) = (slot.a, slot.b);
            self.wake_id(a);
            self.wake_id(b);
        }
        Ok(())
    }

    /// A joint's parameters.
    pub fn joint(&self, h: JointHandle) -> Option<&Joint> {
        let i = self.joint_slot(h).ok()?;
        Some(&self.world.joints[i].joint)
    }

    /// The bodies a joint connects, in its frames' order.
    pub fn joint_bodies(&self, h: JointHandle) -> Option<(BodyHandle, BodyHandle)> {
        let i = self.joint_slot(h).ok()?;
        let s = &self.world.joints[i];
        Some((self.handle_of(s.a), self.handle_of(s.b)))
    }

    /// What a joint did in the last substep (its force, torque, motor force, whether it broke).
    pub fn joint_state(&self, h: JointHandle) -> Option<&JointState> {
        let i = self.joint_slot(h).ok()?;
        Some(&self.world.joints[i].state)
    }

    /// The living joints (broken ones included), in slot order.
    pub fn joints(&self) -> impl Iterator<Item = JointHandle> + '_ {
        self.world
            .joints
            .iter()
            .enumerate()
            .filter(|(_, s)| s.alive)
            .map(|(i, s)| JointHandle {
                index: i as u32,
                generation: s.generation,
            })
    }

    /// Removes the joints of body `id` (it is being removed).
    pub(crate) fn remove_joints_of(&mut self, id: BodyId) {
        for s in &mut self.world.joints {
            if s.alive && (s.a == id || s.b == id) {
                s.alive = false;
            }
        }
    }

    /// Drops the broad phase's candidates that acting joints keep from colliding.
    pub(crate) fn filter_joined_pairs(&mut self) {
        let mut joined: Vec<(BodyId, BodyId)> = self
            .world
            .joints
            .iter()
            .filter(|s| s.acts() && !s.joint.collide_connected)
            .map(|s| (s.a.min(s.b), s.a.max(s.b)))
            .collect();
        if joined.is_empty() {
            return;
        }
        joined.sort_unstable();
        self.candidates
            .retain(|&(a, b)| joined.binary_search(&(a.min(b), a.max(b))).is_err());
    }

    /// Joins the islands of the dynamic bodies that acting joints connect.
    pub(crate) fn join_islands(&self, islands: &mut Islands) {
        let bodies = self.world.bodies();
        for s in self.world.joints.iter().filter(|s| s.acts()) {
            let dynamic = |i: BodyId| self.slots[i].alive && bodies[i].kind == BodyKind::Dynamic;
            if dynamic(s.a) && dynamic(s.b) {
                islands.union(s.a, s.b);
            }
        }
    }
}
