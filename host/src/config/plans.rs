//! `[plans.<name>]` tables (contract §9 "Plans"): each plan's limits, read into
//! [`crate::plans::Plans`]. A plan's table in the operator's file overrides the shipped table
//! of that name key by key (contract §10); a key neither sets is no limit — for
//! `api_integrations`, the API is included. Every error names `plans.<name>.<key>` and its
//! file.

use std::collections::BTreeMap;
use std::time::Duration;

use super::duration;
use super::layers::{ConfigError, Origin};
use crate::plans::{Ceiling, Limits, Plans, Rules};

/// The keys a plan's table may have.
const KEYS: &[&str] = &[
    "api_integrations",
    "events_per_day",
    "webhooks",
    "plugins",
    "plugin_bytes",
    "delivery_retention",
    "event_retention",
];

/// The longest a plan's retention may be.
const YEAR: Duration = Duration::from_secs(365 * 86_400);

/// Most webhooks an organisation can have whatever its plan (the store's bound).
const MOST_WEBHOOKS: u64 = crate::store::tenants::webhooks::MAX_WEBHOOKS_PER_ORG as u64;

/// The validated plans of the layers' tables; `schedule` is the retry schedule every
/// delivery retention must outlast, `ceiling` the installation's retentions.
pub(super) fn validate(
    tables: &BTreeMap<String, (toml::Table, Origin)>,
    schedule: &[Duration],
    ceiling: Ceiling,
) -> Result<Plans, ConfigError> {
    if tables.is_empty() {
        let origin = Origin::Default("plans");
        return Err(ConfigError::Invalid { origin, message: "at least one plan must be configured".into() });
    }
    let rules = tables.iter().map(|(name, (table, origin))| Plan { name, table, origin }.rules(schedule));
    Ok(Plans::new(rules.collect::<Result<Vec<_>, _>>()?, ceiling))
}

/// One plan's table being read.
struct Plan<'a> {
    name: &'a str,
    table: &'a toml::Table,
    origin: &'a Origin,
}

impl Plan<'_> {
    fn invalid(&self, key: &str, message: impl std::fmt::Display) -> ConfigError {
        let origin = match self.origin {
            Origin::Default(_) => Origin::Default("plans"),
            other => other.clone(),
        };
        ConfigError::Invalid { origin, message: format!("plans.{}.{key} {message}", self.name) }
    }

    fn rules(&self, schedule: &[Duration]) -> Result<Rules, ConfigError> {
        if let Some(key) = self.table.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(self.invalid(key, format!("is no plan setting (known: {})", KEYS.join(", "))));
        }
        let api_integrations = match self.table.get("api_integrations") {
            None => true,
            Some(toml::Value::Boolean(b)) => *b,
            Some(_) => return Err(self.invalid("api_integrations", "must be true or false")),
        };
        let delivery_retention = self.duration("delivery_retention")?;
        if let Some(kept) = delivery_retention {
            let span: Duration = schedule.iter().sum();
            if kept < span.mul_f64(1.2) + Duration::from_secs(60) {
                let why =
                    format!("must outlast the retry schedule ({} with jitter)", duration::format(span.mul_f64(1.2)));
                return Err(self.invalid("delivery_retention", why));
            }
        }
        let event_retention = self.duration("event_retention")?;
        if let (Some(events), Some(deliveries)) = (event_retention, delivery_retention)
            && events > deliveries
        {
            return Err(self.invalid("event_retention", "must be at most the plan's delivery_retention"));
        }
        let limits = Limits {
            events_per_day: self.count("events_per_day", u64::MAX >> 12)?,
            webhooks: self.count("webhooks", MOST_WEBHOOKS)?,
            plugins: self.count("plugins", 100_000)?,
            plugin_bytes: self.count("plugin_bytes", 1 << 40)?,
            delivery_retention,
            event_retention,
        };
        Ok(Rules { name: self.name.to_owned(), api_integrations, limits })
    }

    fn count(&self, key: &str, most: u64) -> Result<Option<u64>, ConfigError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(toml::Value::Integer(n)) if (0..=most as i64).contains(n) => Ok(Some(*n as u64)),
            Some(_) => {
                Err(self.invalid(key, format!("must be a whole number from 0 to {most} (leave it out: no limit)")))
            }
        }
    }

    fn duration(&self, key: &str) -> Result<Option<Duration>, ConfigError> {
        match self.table.get(key) {
            None => Ok(None),
            Some(toml::Value::String(text)) => {
                let d = duration::parse_span(text).map_err(|m| self.invalid(key, m))?;
                if d > YEAR {
                    return Err(self.invalid(key, "must be at most 365d"));
                }
                Ok(Some(d))
            }
            Some(_) => Err(self.invalid(key, "must be a duration such as \"7d\" (leave it out: the installation's)")),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use crate::config::Config;

    /// The configuration with `toml` as its file.
    fn with_file(toml: &str) -> Result<Config, String> {
        let path = std::env::temp_dir().join(format!("weir-plans-{}.toml", crate::ids::new(crate::ids::Kind::Event)));
        std::fs::write(&path, toml).unwrap();
        let config = crate::config::load_with(Some(&path), |_| None).map_err(|e| e.to_string());
        std::fs::remove_file(&path).unwrap();
        config
    }

    #[test]
    fn the_shipped_plans_take_nothing_from_pro_and_bound_free() {
        let config = crate::config::load_with(None, |_| None).unwrap();
        let pro = config.plans.rules("pro");
        assert!(pro.api_integrations);
        assert_eq!((pro.limits.events_per_day, pro.limits.webhooks), (None, Some(500)));
        assert_eq!(config.plans.delivery_retention("pro"), config.delivery_retention);
        let free = config.plans.rules("free");
        assert!(!free.api_integrations);
        assert_eq!(free.limits.events_per_day, Some(10_000));
        assert_eq!(config.plans.delivery_retention("free"), Duration::from_secs(4 * 86_400));
        assert_eq!(config.plans.event_retention("free"), Duration::from_secs(86_400));
    }

    #[test]
    fn a_plan_of_the_file_overrides_the_shipped_one_key_by_key_and_adds_to_the_others() {
        let config = with_file("[plans.free]\nwebhooks = 3\n[plans.team]\nwebhooks = 9\n").unwrap();
        let free = config.plans.rules("free");
        assert_eq!((free.limits.webhooks, free.limits.events_per_day), (Some(3), Some(10_000)), "the others kept");
        assert!(!free.api_integrations, "the shipped `free` still has no API");
        let team = config.plans.rules("team");
        assert!(team.api_integrations, "a key neither sets is no limit: the API included");
        assert_eq!((team.limits.webhooks, team.limits.events_per_day), (Some(9), None));
        assert!(config.plans.get("pro").is_some());
    }

    #[test]
    fn a_pro_table_setting_only_the_documented_limits_keeps_the_api() {
        let config = with_file("[plans.pro]\nevents_per_day = 1000\n").unwrap();
        let pro = config.plans.rules("pro");
        assert!(pro.api_integrations, "pro includes API integrations (contract §1)");
        assert_eq!(
            (pro.limits.events_per_day, pro.limits.webhooks, pro.limits.plugins),
            (Some(1000), Some(500), Some(100))
        );
    }

    #[test]
    fn a_bad_plan_is_refused_naming_its_key() {
        for (toml, says) in [
            ("[plans.free]\nevents_per_dya = 3\n", "plans.free.events_per_dya is no plan setting"),
            ("[plans.free]\nwebhooks = -1\n", "plans.free.webhooks must be a whole number"),
            ("[plans.free]\nwebhooks = 501\n", "plans.free.webhooks must be a whole number from 0 to 500"),
            (
                "[plans.free]\ndelivery_retention = \"1h\"\n",
                "plans.free.delivery_retention must outlast the retry schedule",
            ),
            (
                "[plans.x]\ndelivery_retention = \"5d\"\nevent_retention = \"6d\"\n",
                "plans.x.event_retention must be at most",
            ),
            ("[plans.x]\napi_integrations = \"yes\"\n", "plans.x.api_integrations must be true or false"),
            ("[plans.Big]\n", "plan name `Big`"),
            ("plans = 3\n", "must be a table of plans"),
        ] {
            let err = with_file(toml).unwrap_err();
            assert!(err.contains(says), "{toml}: {err}");
        }
    }
}
