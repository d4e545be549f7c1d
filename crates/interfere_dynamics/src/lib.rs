//! interfere_dynamics (under construction).
#![deny(missing_docs)]
