//! Logging of the `weir` commands: to stderr, as text or JSON lines.

use crate::config::LogFormat;

/// Logging to stderr, filtered by `WEIR_LOG` (default `default`), as text (colours only on
/// a terminal) or one JSON object a line (`WEIR_LOG_FORMAT`).
pub(super) fn init_logging(default: &str, format: LogFormat) {
    use std::io::IsTerminal;
    let filter = tracing_subscriber::EnvFilter::try_from_env("WEIR_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    let _ = match format {
        LogFormat::Text => builder.with_ansi(std::io::stderr().is_terminal()).try_init(),
        // Fields at the top level, beside `timestamp`, `level`, `target` and `message`.
        LogFormat::Json => builder.json().flatten_event(true).with_current_span(false).try_init(),
    };
}
