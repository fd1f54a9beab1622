//! The algebra of the bound: what an expression's value and evaluation may come to, as
//! linear forms in the element the innermost macro is at, and the cost of each kind of work
//! in nanoseconds.
//!
//! The costs are estimates for a release build, calibrated against measured evaluations
//! (`WEIR_BENCH_ONLY=filters ./scripts/bench.sh` prints each calibration filter's bound
//! beside its time; the bound stays above the time): one node of the expression evaluated
//! (a name looked up, an operator applied), one macro iteration (its scope, its element, the
//! meter's tick), a byte compared or copied, a byte through a pattern's automaton.

/// One node of the expression evaluated.
pub(super) const STEP_NS: u64 = 40;
/// One macro iteration, beside its body's nodes.
pub(super) const ITER_NS: u64 = 120;
/// One byte compared, searched or copied.
pub(super) const BYTE_NS: u64 = 1;
/// One byte read by a pattern's automaton (`matches`).
pub(super) const REGEX_BYTE_NS: u64 = 3;
/// A search's set-up (a cache taken from the pattern's, its start state).
pub(super) const REGEX_SETUP_NS: u64 = 300;
/// Making `event`, the whole envelope, as values: per byte and per element of the event.
pub(super) const WHOLE_BYTE_NS: u64 = 2;
pub(super) const WHOLE_ELEMENT_NS: u64 = 100;

/// `fixed + bytes·b + elems·e` for an element of `b` bytes holding `e` elements (lists'
/// elements and maps' entries, at every depth) — the element the innermost macro is at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(super) struct Lin {
    pub(super) fixed: u64,
    pub(super) bytes: u64,
    pub(super) elems: u64,
}

/// The largest element a macro can be at: its bytes and the elements it holds.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Element {
    pub(super) bytes: u64,
    pub(super) elems: u64,
}

impl Lin {
    pub(super) const fn of(fixed: u64) -> Lin {
        Lin { fixed, bytes: 0, elems: 0 }
    }
    /// The element's own size.
    pub(super) const ELEMENT_BYTES: Lin = Lin { fixed: 0, bytes: 1, elems: 0 };
    /// The elements the element holds.
    pub(super) const ELEMENT_ELEMS: Lin = Lin { fixed: 0, bytes: 0, elems: 1 };

    pub(super) fn plus(self, other: Lin) -> Lin {
        Lin {
            fixed: self.fixed.saturating_add(other.fixed),
            bytes: self.bytes.saturating_add(other.bytes),
            elems: self.elems.saturating_add(other.elems),
        }
    }
    pub(super) fn times(self, k: u64) -> Lin {
        Lin {
            fixed: self.fixed.saturating_mul(k),
            bytes: self.bytes.saturating_mul(k),
            elems: self.elems.saturating_mul(k),
        }
    }
    pub(super) fn max(self, other: Lin) -> Lin {
        Lin {
            fixed: self.fixed.max(other.fixed),
            bytes: self.bytes.max(other.bytes),
            elems: self.elems.max(other.elems),
        }
    }
    /// A bound on the smaller of two: either one, the constant one if there is one.
    pub(super) fn min(self, other: Lin) -> Lin {
        match (self.is_constant(), other.is_constant()) {
            (true, true) => Lin::of(self.fixed.min(other.fixed)),
            (true, false) => self,
            (false, true) => other,
            (false, false) => self,
        }
    }
    fn is_constant(self) -> bool {
        self.bytes == 0 && self.elems == 0
    }
    /// Its largest value at the largest `element`.
    pub(super) fn at_most(self, element: Element) -> u64 {
        self.fixed
            .saturating_add(self.bytes.saturating_mul(element.bytes))
            .saturating_add(self.elems.saturating_mul(element.elems))
    }
    /// What `per` (a linear form in one element of `range`) adds up to over all of its
    /// elements: there are at most `range.elems` of them, their sizes add up to at most
    /// `range.size` and the elements they hold to at most `range.elems` — each itself a
    /// linear form in the enclosing element.
    pub(super) fn over(range: &Bound, per: Lin) -> Lin {
        range.elems.times(per.fixed.saturating_add(per.elems)).plus(range.size.times(per.bytes))
    }
}

/// What a value is, as far as the check can tell (`Dyn`: taken from the event, any type).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ty {
    Dyn,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Null,
    List,
    Map,
}

impl Ty {
    pub(super) fn name(self) -> &'static str {
        match self {
            Ty::Dyn => "a value",
            Ty::Bool => "a boolean",
            Ty::Int => "an int",
            Ty::Uint => "a uint",
            Ty::Double => "a double",
            Ty::String => "a string",
            Ty::Bytes => "bytes",
            Ty::Null => "null",
            Ty::List => "a list",
            Ty::Map => "a map",
        }
    }
    pub(super) fn is_number(self) -> bool {
        matches!(self, Ty::Int | Ty::Uint | Ty::Double)
    }
    /// Whether a value of this type may be one of `allowed`.
    pub(super) fn may_be(self, allowed: &[Ty]) -> bool {
        self == Ty::Dyn || allowed.contains(&self)
    }
}

/// Bounds on an expression's value — its size in bytes and the elements it holds — and on
/// the time evaluating it takes; and its type.
#[derive(Debug, Clone, Copy)]
pub(super) struct Bound {
    pub(super) size: Lin,
    pub(super) elems: Lin,
    pub(super) cost: Lin,
    pub(super) ty: Ty,
}

impl Bound {
    /// A scalar of `ty` and `size` bytes, costing `cost`.
    pub(super) fn scalar(ty: Ty, size: u64, cost: Lin) -> Bound {
        Bound { size: Lin::of(size), elems: Lin::default(), cost, ty }
    }
}
