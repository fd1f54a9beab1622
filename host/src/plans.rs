//! Plans (contract §9 "Plans"): what each organisation may put in, set by the operator as
//! `[plans.<name>]` tables (`host/config.default.toml` ships `free` and `pro`). A limit left
//! out is no limit; a retention left out is the installation's (`delivery_retention`,
//! `event_retention`), and none is longer than it.
//!
//! An organisation stores its plan's name only; what the name allows is read here, so a
//! changed table applies at the next start and a changed plan at the next request.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

/// The counts a plan may bound, each one's `details[].field` in a `quota_exceeded` answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quota {
    EventsPerDay,
    Webhooks,
    Plugins,
    PluginBytes,
}

impl Quota {
    /// The key in `[plans.<name>]` and the field named in an answer.
    pub fn key(self) -> &'static str {
        match self {
            Quota::EventsPerDay => "events_per_day",
            Quota::Webhooks => "webhooks",
            Quota::Plugins => "plugins",
            Quota::PluginBytes => "plugin_bytes",
        }
    }

    pub const ALL: [Quota; 4] = [Quota::EventsPerDay, Quota::Webhooks, Quota::Plugins, Quota::PluginBytes];
}

/// What one plan allows (`None`: no limit).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Limits {
    pub events_per_day: Option<u64>,
    pub webhooks: Option<u64>,
    pub plugins: Option<u64>,
    pub plugin_bytes: Option<u64>,
    /// How long its deliveries are kept (`None`: the installation's `delivery_retention`).
    pub delivery_retention: Option<Duration>,
    /// How far back its event log and replays reach (`None`: the installation's).
    pub event_retention: Option<Duration>,
}

impl Limits {
    /// The limit on `quota`.
    pub fn of(&self, quota: Quota) -> Option<u64> {
        match quota {
            Quota::EventsPerDay => self.events_per_day,
            Quota::Webhooks => self.webhooks,
            Quota::Plugins => self.plugins,
            Quota::PluginBytes => self.plugin_bytes,
        }
    }
}

/// A named plan.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rules {
    pub name: String,
    /// Whether its organisations may use the API (contract §1; `pro` does, `free` not).
    pub api_integrations: bool,
    pub limits: Limits,
}

/// The retentions of the installation, which bound every plan's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ceiling {
    pub deliveries: Duration,
    pub events: Duration,
}

/// Every plan the operator configured.
#[derive(Debug, Clone)]
pub struct Plans {
    by_name: BTreeMap<String, Arc<Rules>>,
    ceiling: Ceiling,
    /// What an organisation whose plan is no longer configured gets: no API and nothing
    /// new (every count 0), until an operator gives it a plan that exists.
    unknown: Arc<Rules>,
}

/// Whether `name` may name a plan: 1–32 lower-case letters, digits, `-` and `_`.
pub fn is_valid_name(name: &str) -> bool {
    (1..=32).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'_')
}

impl Plans {
    /// The plans, with the installation's retentions as their ceiling.
    pub fn new(plans: impl IntoIterator<Item = Rules>, ceiling: Ceiling) -> Plans {
        let by_name = plans.into_iter().map(|r| (r.name.clone(), Arc::new(r))).collect();
        let nothing = Limits {
            events_per_day: Some(0),
            webhooks: Some(0),
            plugins: Some(0),
            plugin_bytes: Some(0),
            delivery_retention: None,
            event_retention: None,
        };
        let unknown = Arc::new(Rules { name: String::new(), api_integrations: false, limits: nothing });
        Plans { by_name, ceiling, unknown }
    }

    /// The plan named `name`, if it is configured.
    pub fn get(&self, name: &str) -> Option<&Arc<Rules>> {
        self.by_name.get(name)
    }

    /// The rules for an organisation on `name` (see [`Plans::unknown`] when none is configured).
    pub fn rules(&self, name: &str) -> &Arc<Rules> {
        self.by_name.get(name).unwrap_or(&self.unknown)
    }

    /// The configured names, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.by_name.keys().map(String::as_str)
    }

    /// How long the deliveries of an organisation on `name` are kept.
    pub fn delivery_retention(&self, name: &str) -> Duration {
        self.rules(name).limits.delivery_retention.map_or(self.ceiling.deliveries, |d| d.min(self.ceiling.deliveries))
    }

    /// How far back the event log of an organisation on `name` reaches (zero: no log).
    pub fn event_retention(&self, name: &str) -> Duration {
        let events =
            self.rules(name).limits.event_retention.map_or(self.ceiling.events, |d| d.min(self.ceiling.events));
        events.min(self.delivery_retention(name))
    }

    /// The installation's retentions.
    pub fn ceiling(&self) -> Ceiling {
        self.ceiling
    }

    /// Every delivery retention a plan has (each plan's, the ceiling's included), shortest
    /// first: the classes history keeps apart.
    pub fn delivery_retentions(&self) -> Vec<Duration> {
        let mut all: Vec<Duration> = self.by_name.keys().map(|n| self.delivery_retention(n)).collect();
        all.push(self.ceiling.deliveries);
        all.sort();
        all.dedup();
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: Duration = Duration::from_secs(86_400);

    fn plans() -> Plans {
        let free = Rules {
            name: "free".into(),
            api_integrations: false,
            limits: Limits { events_per_day: Some(10), delivery_retention: Some(4 * DAY), ..Limits::default() },
        };
        let long = Rules {
            name: "long".into(),
            api_integrations: true,
            limits: Limits { delivery_retention: Some(30 * DAY), event_retention: Some(30 * DAY), ..Limits::default() },
        };
        Plans::new([free, long], Ceiling { deliveries: 7 * DAY, events: 2 * DAY })
    }

    #[test]
    fn a_plans_retention_is_its_own_within_the_installations() {
        let plans = plans();
        assert_eq!(plans.delivery_retention("free"), 4 * DAY);
        assert_eq!(plans.event_retention("free"), 2 * DAY);
        assert_eq!(plans.delivery_retention("long"), 7 * DAY, "never past the ceiling");
        assert_eq!(plans.event_retention("long"), 2 * DAY);
        assert_eq!(plans.delivery_retentions(), vec![4 * DAY, 7 * DAY]);
    }

    #[test]
    fn an_unconfigured_plan_allows_nothing_new() {
        let plans = plans();
        let rules = plans.rules("gone");
        assert!(!rules.api_integrations);
        assert!(Quota::ALL.iter().all(|q| rules.limits.of(*q) == Some(0)));
        assert_eq!(plans.rules("free").limits.of(Quota::Webhooks), None);
    }

    #[test]
    fn plan_names_are_short_and_plain() {
        assert!(is_valid_name("free") && is_valid_name("team-2_x"));
        assert!(
            !is_valid_name("") && !is_valid_name("Pro") && !is_valid_name("a b") && !is_valid_name(&"a".repeat(33))
        );
    }
}
