//! Registering a worker with Restate's admin API.

use serde_json::json;

/// Registers (or re-registers) the endpoint at `uri` with the admin API at
/// `admin`; Restate reads the endpoint's services from it.
pub async fn register(admin: &str, uri: &str) -> Result<(), String> {
    let url = format!("{}/deployments", admin.trim_end_matches('/'));
    let client = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .map_err(|e| e.to_string())?;
    let res = client
        .post(&url)
        .json(&json!({ "uri": uri, "force": true }))
        .send()
        .await
        .map_err(|e| format!("{url}: {:#}", anyhow::Error::from(e)))?;
    let status = res.status();
    if status.is_success() {
        return Ok(());
    }
    let body = res.text().await.unwrap_or_default();
    Err(format!("{url} answered {status}: {}", body.trim()))
}

/// The command that registers the endpoint by hand.
pub fn command(uri: &str, admin: &str) -> String {
    format!(
        "register this worker with: curl -X POST {}/deployments -H 'content-type: application/json' -d '{{\"uri\": \"{uri}\", \"force\": true}}'",
        admin.trim_end_matches('/')
    )
}
