//! `weir health`: asks this installation's `GET /readyz` — at `WEIR_LISTEN`, on loopback when
//! it listens on every address — and exits 0 when it answers 200, 1 otherwise. A container's
//! `HEALTHCHECK` uses it: the image has no HTTP client of its own. Plain HTTP: with
//! `WEIR_TLS_CERT` set, probe from outside the container instead.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, TcpStream};
use std::process::ExitCode;
use std::time::Duration;

/// Longest the probe waits to connect, and for each read or write.
const WAIT: Duration = Duration::from_secs(3);

/// The address to ask: `listen`, with an unspecified address replaced by loopback.
pub(super) fn probe_address(listen: SocketAddr) -> SocketAddr {
    let ip = match listen.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(ip) if ip.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
        ip => ip,
    };
    SocketAddr::new(ip, listen.port())
}

/// An HTTP answer's first line.
fn status_line(answer: &[u8]) -> &[u8] {
    answer.split(|b| *b == b'\n').next().unwrap_or_default()
}

/// Whether an HTTP answer's status line is `200`.
fn is_ok(answer: &[u8]) -> bool {
    let mut words = status_line(answer).split(|b| *b == b' ');
    words.next().is_some_and(|v| v.starts_with(b"HTTP/1.")) && words.next() == Some(b"200".as_slice())
}

/// Asks `/readyz` once: `Ok(())` when it answered 200, else what went wrong.
fn ask(address: SocketAddr) -> Result<(), String> {
    let mut stream =
        TcpStream::connect_timeout(&address, WAIT).map_err(|e| format!("cannot connect to {address}: {e}"))?;
    stream
        .set_read_timeout(Some(WAIT))
        .and_then(|()| stream.set_write_timeout(Some(WAIT)))
        .map_err(|e| e.to_string())?;
    let request = format!("GET /readyz HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).map_err(|e| format!("cannot ask {address}: {e}"))?;
    let mut answer = Vec::new();
    // The status line is all that is judged; a body cut short by the timeout does not matter.
    let _ = stream.take(4096).read_to_end(&mut answer);
    if is_ok(&answer) {
        return Ok(());
    }
    let line = String::from_utf8_lossy(status_line(&answer)).trim().to_owned();
    Err(format!("{address} answered {line:?}"))
}

/// Runs the probe: exit 0 when ready.
pub(super) fn run(listen: SocketAddr) -> ExitCode {
    match ask(probe_address(listen)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("weir: not ready: {why}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{is_ok, probe_address};

    #[test]
    fn an_unspecified_listen_address_is_asked_on_loopback() {
        assert_eq!(probe_address("0.0.0.0:8080".parse().unwrap()), "127.0.0.1:8080".parse().unwrap());
        assert_eq!(probe_address("[::]:9000".parse().unwrap()), "[::1]:9000".parse().unwrap());
        assert_eq!(probe_address("127.0.0.2:80".parse().unwrap()), "127.0.0.2:80".parse().unwrap());
    }

    #[test]
    fn only_a_200_is_ready() {
        assert!(is_ok(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"));
        assert!(!is_ok(b"HTTP/1.1 503 Service Unavailable\r\n\r\n"));
        assert!(!is_ok(b"HTTP/1.1 2000 Odd\r\n"));
        assert!(!is_ok(b""));
        assert!(!is_ok(b"SSH-2.0-OpenSSH\r\n"));
    }
}
