//! Plugin uploads below HTTP: the bytes checked and compiled within the process's compile
//! budget (`crate::plugins`), then stored within the organisation's plan — its plugins, and
//! its bytes of code, each distinct code counted once (an upload of bytes the organisation
//! stores already stores no second copy). The compiled plugin is kept only once stored.

use std::sync::Arc;

use crate::app::App;
use crate::auth::plans;
use crate::ids::{self, Kind};
use crate::plugins::{BudgetError, UploadError as CompileError};
use crate::store::StoreError;
use crate::store::orgs::Plan;
use crate::store::plugins::{Plugin, PluginQuota, Refused};

/// Why an upload was not stored.
#[derive(Debug, thiserror::Error)]
pub enum UploadError {
    /// Not a plugin (the reason names what is wrong with the body).
    #[error("{0}")]
    Invalid(String),
    /// The organisation's plan allows no more.
    #[error("{0}")]
    Quota(String),
    /// Another upload of the organisation is compiling.
    #[error("{0}")]
    OrganisationBusy(String),
    /// The compiler is busy, or the compile took too long.
    #[error("{0}")]
    Busy(String),
    #[error(transparent)]
    Store(#[from] StoreError),
}

const MIB: f64 = 1024.0 * 1024.0;

/// Checks, compiles and stores an upload of `org_id` as the next version of `name`.
pub async fn upload(
    app: &App,
    org_id: &str,
    plan: Plan,
    name: String,
    wasm: bytes::Bytes,
) -> Result<Plugin, UploadError> {
    let limits = plans::limits(plan);
    let quota = PluginQuota { plugins: limits.plugins, bytes: limits.plugin_bytes };
    let wasm: Arc<[u8]> = Arc::from(wasm.as_ref());
    let hashing = wasm.clone();
    let sha256 = tokio::task::spawn_blocking(move || crate::plugins::sha256_hex(&hashing))
        .await
        .map_err(|_| UploadError::Busy("the upload could not be read; retry".into()))?;
    let size = wasm.len() as u64;
    // The plan first: nothing is compiled for an upload that could not be stored.
    let (usage, stored) = app.store.plugin_usage(org_id, &sha256).await?;
    if usage.plugins >= quota.plugins {
        return Err(refused(Refused::Plugins, quota, plan));
    }
    if !stored && usage.bytes + size > quota.bytes {
        return Err(refused(Refused::Bytes, quota, plan));
    }
    let staged = app.plugins.compile_upload(org_id, wasm.clone()).await.map_err(|e| match e {
        CompileError::Invalid(why) => UploadError::Invalid(why.to_string()),
        CompileError::Budget(e @ BudgetError::OrganisationBusy) => UploadError::OrganisationBusy(e.to_string()),
        CompileError::Budget(e) => UploadError::Busy(e.to_string()),
    })?;
    let plugin = Plugin {
        id: ids::new(Kind::Plugin),
        name,
        sha256,
        size,
        created_at: crate::time::now_rfc3339(),
        version: 0,
        org_id: org_id.to_owned(),
    };
    let plugin = app.store.create_plugin(&plugin, &wasm, quota).await?.map_err(|r| refused(r, quota, plan))?;
    let runtime = app.plugins.clone();
    let _ = tokio::task::spawn_blocking(move || runtime.keep(staged)).await;
    Ok(plugin)
}

fn refused(why: Refused, quota: PluginQuota, plan: Plan) -> UploadError {
    UploadError::Quota(match why {
        Refused::Plugins => format!(
            "the organisation already has {} plugins, the most its plan ({}) allows; delete versions it no longer uses",
            quota.plugins,
            plan.as_str()
        ),
        Refused::Bytes => format!(
            "the organisation's plugins would take more than the {:.0} MiB of code its plan ({}) allows; delete versions it no longer uses",
            quota.bytes as f64 / MIB,
            plan.as_str()
        ),
    })
}
