//! What a filter may say, and a bound on what its evaluation can cost, found before it is
//! accepted.
//!
//! Names: the envelope's variables (`id`, `action`, `created_at`, `organisation`,
//! `creator`, `subject`, every snapshot key of the catalogue, and `event`) and the
//! variables of its own macros. Functions: CEL's operators, `size`, `contains`,
//! `startsWith`, `endsWith`, `matches` (its pattern a string literal of at most
//! [`MAX_PATTERN`] bytes), `int`, `uint`, `double`, `string`, and the macros `has`, `all`,
//! `exists`, `exists_one`, `map` and `filter`.
//!
//! The bound: every value taken from the event is at most [`EVENT_BOUND`] bytes (the body
//! limit). Each expression gets a bound on its value's size and on the work evaluating it
//! takes (units of about a byte looked at, or one step), both *linear in the element* a
//! macro is at: over a list of at most `R` bytes, a body costing `a + b·x` for an element
//! of `x` bytes costs at most `(a + b)·R` in all, since the elements' sizes add up to at
//! most `R`. A filter whose bound passes [`COST_BUDGET`], or whose values may grow past
//! [`SIZE_BUDGET`], is refused, naming where the cost comes from. So `exists` over any
//! list of the event passes, and so do comparisons and string tests of its fields, while
//! a macro that compares each element with another large value, or builds strings or
//! lists from the whole event over and over, does not.

use cel::common::ast::{ComprehensionExpr, EntryExpr, Expr, LiteralValue};
use cel::parser::Expression;

use super::error::FilterError;

/// The largest value an event can hold, in bytes: its body limit.
pub const EVENT_BOUND: u64 = 1 << 20;
/// The most work an evaluation may take: 32 passes over the largest event.
pub const COST_BUDGET: u64 = 32 * EVENT_BOUND;
/// The largest value an evaluation may build.
const SIZE_BUDGET: u64 = 4 * EVENT_BOUND;
/// The longest pattern `matches` takes (compiling one is paid at each call).
pub const MAX_PATTERN: usize = 256;

/// `fixed + per · x`, for the size `x` of the element the innermost macro is at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Lin {
    fixed: u64,
    per: u64,
}

impl Lin {
    const fn of(fixed: u64) -> Lin {
        Lin { fixed, per: 0 }
    }
    fn plus(self, other: Lin) -> Lin {
        Lin { fixed: self.fixed.saturating_add(other.fixed), per: self.per.saturating_add(other.per) }
    }
    fn times(self, k: u64) -> Lin {
        Lin { fixed: self.fixed.saturating_mul(k), per: self.per.saturating_mul(k) }
    }
    fn max(self, other: Lin) -> Lin {
        Lin { fixed: self.fixed.max(other.fixed), per: self.per.max(other.per) }
    }
    /// A bound on the smaller of two: either one, the constant one if there is one.
    fn min(self, other: Lin) -> Lin {
        match (self.per, other.per) {
            (0, 0) => Lin::of(self.fixed.min(other.fixed)),
            (0, _) => self,
            (_, 0) => other,
            _ => self,
        }
    }
    /// Its largest value, the element being at most `element` bytes.
    fn at_most(self, element: u64) -> u64 {
        self.fixed.saturating_add(self.per.saturating_mul(element))
    }
}

/// Bounds on an expression's value size and on the work evaluating it takes.
#[derive(Debug, Clone, Copy)]
struct Bound {
    size: Lin,
    cost: Lin,
}

/// What a name stands for where it is used.
#[derive(Debug, Clone, Copy)]
enum Name {
    /// A variable of the event or an enclosing macro's element (flattened).
    Sized(Lin),
}

struct Checker<'a> {
    program: &'a cel::Program,
    source: &'a str,
    /// Names in scope, innermost last.
    names: Vec<(String, Name)>,
    /// The largest element the innermost macro can be at (0 outside any).
    element: u64,
    /// Whether a macro was met.
    macros: bool,
}

/// Checks a compiled filter; the bound on its evaluation's cost, and whether it has macros.
pub(super) fn check(program: &cel::Program, source: &str) -> Result<(u64, bool), FilterError> {
    let mut names: Vec<(String, Name)> =
        variables().iter().map(|n| (n.to_string(), Name::Sized(Lin::of(EVENT_BOUND)))).collect();
    names.push(("event".to_owned(), Name::Sized(Lin::of(EVENT_BOUND))));
    let mut checker = Checker { program, source, names, element: 0, macros: false };
    let root = program.expression();
    let bound = checker.walk(root)?;
    let cost = bound.cost.at_most(0);
    if cost > COST_BUDGET {
        return Err(checker.fault(root, too_costly(cost)));
    }
    Ok((cost, checker.macros))
}

fn too_costly(cost: u64) -> String {
    format!(
        "may cost too much on a large event (about {} passes over a 1 MiB event; at most {} are allowed): \
         a macro over the event's lists compares or builds something large for each element",
        cost.div_ceil(EVENT_BOUND),
        COST_BUDGET / EVENT_BOUND
    )
}

impl Checker<'_> {
    fn fault(&self, at: &Expression, message: impl Into<String>) -> FilterError {
        let offset = self.program.source_info().offset_for(at.id).map(|(start, _)| start as usize);
        FilterError { at: offset.map(|o| line_column(self.source, o)), message: message.into() }
    }

    fn name(&self, name: &str) -> Option<Name> {
        self.names.iter().rev().find(|(n, _)| n == name).map(|(_, k)| *k)
    }

    fn walk(&mut self, e: &Expression) -> Result<Bound, FilterError> {
        let one = Lin::of(1);
        let bound = match &e.expr {
            Expr::Literal(literal) => {
                let size = match literal {
                    LiteralValue::String(s) => s.inner().len() as u64,
                    LiteralValue::Bytes(b) => b.inner().len() as u64,
                    _ => 8,
                };
                Bound { size: Lin::of(size), cost: one }
            }
            Expr::Ident(name) => match self.name(name) {
                Some(Name::Sized(size)) => Bound { size, cost: one },
                None => return Err(self.fault(e, format!("unknown name `{name}`: {}", known_names()))),
            },
            Expr::Select(select) => {
                let operand = self.walk(&select.operand)?;
                Bound { size: operand.size, cost: operand.cost.plus(one) }
            }
            Expr::List(list) => {
                let mut bound = Bound { size: Lin::of(list.elements.len() as u64), cost: one };
                for element in &list.elements {
                    let b = self.walk(element)?;
                    bound = Bound { size: bound.size.plus(b.size).plus(one), cost: bound.cost.plus(b.cost) };
                }
                bound
            }
            Expr::Map(map) => {
                let mut bound = Bound { size: Lin::of(map.entries.len() as u64), cost: one };
                for entry in &map.entries {
                    let EntryExpr::MapEntry(entry) = &entry.expr else {
                        return Err(self.fault(e, "a map literal holds key: value pairs only"));
                    };
                    let (k, v) = (self.walk(&entry.key)?, self.walk(&entry.value)?);
                    bound = Bound {
                        size: bound.size.plus(k.size).plus(v.size).plus(one),
                        cost: bound.cost.plus(k.cost).plus(v.cost).plus(k.size),
                    };
                }
                bound
            }
            Expr::Struct(_) => return Err(self.fault(e, "messages (typed structs) are not supported")),
            Expr::Unspecified => return Err(self.fault(e, "an empty expression")),
            Expr::Call(call) => {
                let mut args = Vec::with_capacity(call.args.len() + 1);
                if let Some(target) = &call.target {
                    args.push(self.walk(target)?);
                }
                for arg in &call.args {
                    args.push(self.walk(arg)?);
                }
                let cost = args.iter().fold(one, |c, a| c.plus(a.cost));
                let size = |i: usize| args.get(i).map_or(Lin::of(0), |a| a.size);
                let arity = args.len();
                match (call.func_name.as_str(), arity) {
                    ("_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_", 2) => {
                        Bound { size: Lin::of(1), cost: cost.plus(size(0).min(size(1))) }
                    }
                    ("_&&_" | "_||_" | "!_" | "@not_strictly_false", _) => Bound { size: Lin::of(1), cost },
                    ("_-_" | "_*_" | "_/_" | "_%_" | "-_", _) => Bound { size: Lin::of(8), cost },
                    ("_+_", 2) => {
                        let size = size(0).plus(size(1));
                        Bound { size, cost: cost.plus(size) }
                    }
                    ("_?_:_", 3) => Bound {
                        size: size(1).max(size(2)),
                        cost: one.plus(args[0].cost).plus(args[1].cost.max(args[2].cost)),
                    },
                    ("_[_]", 2) => Bound { size: size(0), cost },
                    ("@in", 2) => Bound { size: Lin::of(1), cost: cost.plus(size(1).times(2)) },
                    ("size", 1) => Bound { size: Lin::of(8), cost: cost.plus(size(0)) },
                    ("contains" | "startsWith" | "endsWith", 2) => {
                        Bound { size: Lin::of(1), cost: cost.plus(size(0)).plus(size(1)) }
                    }
                    ("matches", 2) => {
                        let pattern = call.args.last().and_then(|p| match &p.expr {
                            Expr::Literal(LiteralValue::String(s)) => Some(s.inner().to_owned()),
                            _ => None,
                        });
                        let Some(pattern) = pattern.filter(|p| p.len() <= MAX_PATTERN) else {
                            return Err(self.fault(
                                e,
                                format!("matches() takes a pattern written as a string of at most {MAX_PATTERN} bytes"),
                            ));
                        };
                        if let Err(error) = regex::RegexBuilder::new(&pattern).size_limit(1 << 20).build() {
                            return Err(
                                self.fault(e, format!("matches(): the pattern is not a regular expression: {error}"))
                            );
                        }
                        let per_byte = pattern.len() as u64 + 1;
                        Bound {
                            size: Lin::of(1),
                            cost: cost.plus(size(0).times(per_byte)).plus(Lin::of(64 * per_byte * per_byte)),
                        }
                    }
                    ("int" | "uint" | "double" | "string", 1) => {
                        Bound { size: size(0).plus(Lin::of(32)), cost: cost.plus(size(0)) }
                    }
                    (name, _) => {
                        return Err(self.fault(
                            e,
                            format!("unknown function `{name}` (with {arity} arguments): {}", known_functions()),
                        ));
                    }
                }
            }
            Expr::Comprehension(c) => self.comprehension(e, c)?,
        };
        if bound.size.at_most(self.element) > SIZE_BUDGET {
            return Err(self.fault(
                e,
                "may build too large a value on a large event (strings or lists joined from the event over and over)",
            ));
        }
        if bound.cost.at_most(self.element) > COST_BUDGET {
            return Err(self.fault(e, too_costly(bound.cost.at_most(self.element))));
        }
        Ok(bound)
    }

    /// A macro: its range, then its body once per element (see the module's documentation).
    fn comprehension(&mut self, e: &Expression, c: &ComprehensionExpr) -> Result<Bound, FilterError> {
        if c.iter_var2.is_some() {
            return Err(self.fault(e, "macros with two variables are not supported"));
        }
        self.macros = true;
        let range = self.walk(&c.iter_range)?;
        let init = self.walk(&c.accu_init)?;
        // Inside, the enclosing names are at their largest, the element is at most the
        // range's size, and the accumulator is a boolean or a count (`all`, `exists`,
        // `exists_one`) or, for `map` and `filter`, a list appended to in place (cel's
        // `AppendStep`) that the body never reads.
        let outer = self.element;
        let enclosing = self.names.clone();
        for (_, Name::Sized(size)) in self.names.iter_mut() {
            *size = Lin::of(size.at_most(outer));
        }
        let appends = matches!(&c.accu_init.expr, Expr::List(list) if list.elements.is_empty());
        let accu = if appends { Lin::of(1) } else { Lin::of(init.size.at_most(outer)).plus(Lin::of(16)) };
        self.names.push((c.iter_var.clone(), Name::Sized(Lin { fixed: 0, per: 1 })));
        self.names.push((c.accu_var.clone(), Name::Sized(accu)));
        self.element = range.size.at_most(outer);
        let steps = self.walk(&c.loop_cond).and_then(|cond| Ok((cond, self.walk(&c.loop_step)?)));
        let result = self.walk(&c.result);
        self.element = outer;
        self.names = enclosing;
        let ((cond, step), result) = (steps?, result?);
        // Over a range of `R` bytes there are at most `R / 2` elements (a JSON element takes
        // two bytes with its separator), whose sizes add up to at most `R`: a body costing
        // `a + b·x` costs at most `a·R/2 + b·R` in all (linear in an enclosing element, as
        // the range is).
        let per = cond.cost.plus(step.cost);
        let elements = Lin { fixed: range.size.fixed.div_ceil(2), per: range.size.per.div_ceil(2) };
        let body = elements.times(per.fixed).plus(range.size.times(per.per));
        // What `map` and `filter` build: each element's value (the step less the
        // accumulator), likewise.
        let each = step.size.fixed.saturating_sub(accu.fixed).saturating_add(2);
        let built = elements.times(each).plus(range.size.times(step.size.per));
        Ok(Bound {
            size: built.max(result.size).max(init.size),
            cost: range.cost.plus(init.cost).plus(body).plus(result.cost),
        })
    }
}

/// Line and column (from 1) of byte `offset` of `source`.
fn line_column(source: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(source.len());
    while !source.is_char_boundary(end) {
        end -= 1;
    }
    let before = &source[..end];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn known_names() -> String {
    let mut names = variables();
    names.push("event");
    format!("a filter reads the event's envelope: {}", names.join(", "))
}

fn known_functions() -> &'static str {
    "filters may use CEL's operators, size, contains, startsWith, endsWith, matches, int, uint, double, string, \
     has, all, exists, exists_one, map and filter"
}

/// The envelope's top-level keys: the variables a filter may name (besides `event`).
pub(super) fn variables() -> Vec<&'static str> {
    let mut names = vec!["id", "action", "created_at", "organisation", "creator", "subject"];
    names.extend(crate::catalog::SNAPSHOT_KEYS);
    names.extend(crate::catalog::OPERATIONAL_SNAPSHOT_KEYS);
    names
}
