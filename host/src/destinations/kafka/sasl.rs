//! Signing in to a broker over a new connection: `SaslHandshake` naming the mechanism, then
//! `SaslAuthenticate` — PLAIN (RFC 4616) in one exchange, or SCRAM-SHA-256/512 (RFC 5802,
//! 7677) in two, the broker's own proof checked before the connection is used. The password
//! never leaves this module but inside PLAIN's message or as SCRAM's proof.

use base64::Engine as _;
use bytes::Bytes;
use kafka_protocol::error::ResponseError;
use kafka_protocol::messages::{SaslAuthenticateRequest, SaslHandshakeRequest};
use kafka_protocol::protocol::StrBytes;
use ring::{digest, hmac, pbkdf2};
use serde::{Deserialize, Serialize};

use super::wire::Wire;
use crate::destinations::message::SendError;

/// Kafka's own bound on SCRAM's iterations: a broker asking more is refused (each costs the
/// process CPU).
const MAX_ITERATIONS: u32 = 16_384;

/// A SASL mechanism, as a destination names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Mechanism {
    #[serde(rename = "plain")]
    Plain,
    #[serde(rename = "scram-sha-256")]
    ScramSha256,
    #[serde(rename = "scram-sha-512")]
    ScramSha512,
}

impl Mechanism {
    /// Its name as the destination writes it.
    pub(super) fn read(name: &str) -> Option<Mechanism> {
        match name {
            "plain" => Some(Mechanism::Plain),
            "scram-sha-256" => Some(Mechanism::ScramSha256),
            "scram-sha-512" => Some(Mechanism::ScramSha512),
            _ => None,
        }
    }

    /// Its name on the wire.
    fn wire_name(self) -> &'static str {
        match self {
            Mechanism::Plain => "PLAIN",
            Mechanism::ScramSha256 => "SCRAM-SHA-256",
            Mechanism::ScramSha512 => "SCRAM-SHA-512",
        }
    }
}

/// Who signs in, and how.
#[derive(Clone)]
pub(super) struct Login {
    pub mechanism: Mechanism,
    pub username: String,
    pub password: String,
}

impl std::fmt::Debug for Login {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Login").field("mechanism", &self.mechanism).field("username", &self.username).finish()
    }
}

/// Signs `login` in over `wire`; a refusal is a failed attempt in the broker's words.
pub(super) async fn sign_in(wire: &Wire, login: &Login) -> Result<(), SendError> {
    let mechanism = StrBytes::from_static_str(login.mechanism.wire_name());
    let handshake = wire
        .call(&SaslHandshakeRequest::default().with_mechanism(mechanism), 1)
        .await
        .map_err(super::wire::WireError::into_send)?;
    if let Some(error) = ResponseError::try_from_code(handshake.error_code) {
        let offered: Vec<&str> = handshake.mechanisms.iter().map(|m| m.as_str()).collect();
        return Err(refused(format!(
            "the broker does not take SASL {} ({error}; it offers {})",
            login.mechanism.wire_name(),
            offered.join(", ")
        )));
    }
    match login.mechanism {
        Mechanism::Plain => {
            let message = format!("\0{}\0{}", login.username, login.password);
            authenticate(wire, message.into_bytes()).await.map(drop)
        }
        Mechanism::ScramSha256 => scram(wire, login, Scram::SHA256).await,
        Mechanism::ScramSha512 => scram(wire, login, Scram::SHA512).await,
    }
}

fn refused(why: String) -> SendError {
    SendError::Refused(format!("authentication failed: {why}"))
}

/// One `SaslAuthenticate` exchange: the broker's answer.
async fn authenticate(wire: &Wire, bytes: Vec<u8>) -> Result<Bytes, SendError> {
    let request = SaslAuthenticateRequest::default().with_auth_bytes(Bytes::from(bytes));
    let answer = wire.call(&request, 1).await.map_err(super::wire::WireError::into_send)?;
    match ResponseError::try_from_code(answer.error_code) {
        None => Ok(answer.auth_bytes),
        Some(error) => {
            let said = answer.error_message.as_ref().map(|m| format!(": {}", m.as_str())).unwrap_or_default();
            Err(refused(format!("{error}{said}")))
        }
    }
}

/// A SCRAM variant's hash.
#[derive(Clone, Copy)]
struct Scram {
    pbkdf2: pbkdf2::Algorithm,
    hmac: hmac::Algorithm,
    digest: &'static digest::Algorithm,
}

impl Scram {
    const SHA256: Scram =
        Scram { pbkdf2: pbkdf2::PBKDF2_HMAC_SHA256, hmac: hmac::HMAC_SHA256, digest: &digest::SHA256 };
    const SHA512: Scram =
        Scram { pbkdf2: pbkdf2::PBKDF2_HMAC_SHA512, hmac: hmac::HMAC_SHA512, digest: &digest::SHA512 };

    fn mac(self, key: &[u8], data: &[u8]) -> Vec<u8> {
        hmac::sign(&hmac::Key::new(self.hmac, key), data).as_ref().to_vec()
    }
}

/// SCRAM's two exchanges (no channel binding: `n,,`).
async fn scram(wire: &Wire, login: &Login, scram: Scram) -> Result<(), SendError> {
    let b64 = base64::engine::general_purpose::STANDARD;
    let nonce = b64.encode(rand::random::<[u8; 24]>());
    let first_bare = format!("n={},r={nonce}", sasl_name(&login.username));
    let server_first = authenticate(wire, format!("n,,{first_bare}").into_bytes()).await?;
    let server_first =
        std::str::from_utf8(&server_first).map_err(|_| refused("the broker's SCRAM answer is not text".into()))?;
    let challenge = Challenge::read(server_first, &nonce).map_err(refused)?;
    let proof = prove(scram, &login.password, &first_bare, server_first, &challenge);
    let server_final = authenticate(wire, proof.message.into_bytes()).await?;
    let server_final = String::from_utf8_lossy(&server_final);
    if let Some(error) = server_final.strip_prefix("e=") {
        return Err(refused(error.to_owned()));
    }
    let given = server_final.strip_prefix("v=").and_then(|v| b64.decode(v.trim()).ok()).unwrap_or_default();
    if !bool::from(subtle::ConstantTimeEq::ct_eq(proof.server_signature.as_slice(), given.as_slice())) {
        return Err(refused("the broker's SCRAM signature is wrong: it may not be the broker it claims".into()));
    }
    Ok(())
}

/// SCRAM's final message (with the client's proof) and the signature the broker must answer.
#[derive(Debug)]
struct Proof {
    message: String,
    server_signature: Vec<u8>,
}

fn prove(scram: Scram, password: &str, first_bare: &str, server_first: &str, challenge: &Challenge) -> Proof {
    let mut salted = vec![0u8; scram.digest.output_len()];
    let iterations = std::num::NonZeroU32::new(challenge.iterations).unwrap_or(std::num::NonZeroU32::MIN);
    pbkdf2::derive(scram.pbkdf2, iterations, &challenge.salt, password.as_bytes(), &mut salted);
    let client_key = scram.mac(&salted, b"Client Key");
    let stored_key = digest::digest(scram.digest, &client_key);
    let final_bare = format!("c=biws,r={}", challenge.nonce);
    let auth_message = format!("{first_bare},{server_first},{final_bare}");
    let signature = scram.mac(stored_key.as_ref(), auth_message.as_bytes());
    let proof: Vec<u8> = client_key.iter().zip(&signature).map(|(k, s)| k ^ s).collect();
    let message = format!("{final_bare},p={}", base64::engine::general_purpose::STANDARD.encode(proof));
    Proof { message, server_signature: scram.mac(&scram.mac(&salted, b"Server Key"), auth_message.as_bytes()) }
}

/// A user name as SCRAM writes it (`=` and `,` escaped).
fn sasl_name(name: &str) -> String {
    name.replace('=', "=3D").replace(',', "=2C")
}

/// The broker's first SCRAM message: its nonce (starting with ours), salt and iterations.
#[derive(Debug, PartialEq, Eq)]
struct Challenge {
    nonce: String,
    salt: Vec<u8>,
    iterations: u32,
}

impl Challenge {
    fn read(text: &str, ours: &str) -> Result<Challenge, String> {
        let (mut nonce, mut salt, mut iterations) = (None, None, None);
        for part in text.split(',') {
            match part.split_once('=') {
                Some(("r", v)) => nonce = Some(v.to_owned()),
                Some(("s", v)) => salt = base64::engine::general_purpose::STANDARD.decode(v).ok(),
                Some(("i", v)) => iterations = v.parse::<u32>().ok(),
                Some(("e", v)) => return Err(v.to_owned()),
                _ => {}
            }
        }
        let (Some(nonce), Some(salt), Some(iterations)) = (nonce, salt, iterations) else {
            return Err("the broker's SCRAM challenge lacks its nonce, salt or iterations".into());
        };
        if !nonce.starts_with(ours) || nonce.len() == ours.len() {
            return Err("the broker's SCRAM nonce does not extend Weir's".into());
        }
        if !(1..=MAX_ITERATIONS).contains(&iterations) {
            return Err(format!("the broker asks {iterations} SCRAM iterations (at most {MAX_ITERATIONS})"));
        }
        Ok(Challenge { nonce, salt, iterations })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scram_matches_rfc_7677s_example() {
        // RFC 7677 §3: user "user", password "pencil".
        let (first_bare, server_first) = (
            "n=user,r=rOprNGfwEbeRWgbNEkqO",
            "r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096",
        );
        let challenge = Challenge::read(server_first, "rOprNGfwEbeRWgbNEkqO").unwrap();
        let proof = prove(Scram::SHA256, "pencil", first_bare, server_first, &challenge);
        assert_eq!(
            proof.message,
            "c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ="
        );
        let b64 = base64::engine::general_purpose::STANDARD;
        assert_eq!(b64.encode(proof.server_signature), "6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=");
    }

    #[test]
    fn a_challenge_that_does_not_extend_weirs_nonce_or_asks_too_much_is_refused() {
        assert!(Challenge::read("r=abcXYZ,s=AAAA,i=4096", "abc").is_ok());
        assert!(Challenge::read("r=zzzXYZ,s=AAAA,i=4096", "abc").is_err(), "another nonce");
        assert!(Challenge::read("r=abc,s=AAAA,i=4096", "abc").is_err(), "nothing of the broker's");
        assert!(Challenge::read("r=abcX,s=AAAA,i=1000000", "abc").is_err(), "too many iterations");
        assert!(Challenge::read("r=abcX,i=4096", "abc").is_err(), "no salt");
        assert_eq!(Challenge::read("e=unknown-user", "abc").unwrap_err(), "unknown-user");
        assert_eq!(sasl_name("a=b,c"), "a=3Db=2Cc");
        assert_eq!(Mechanism::read("scram-sha-512"), Some(Mechanism::ScramSha512));
        assert_eq!(Mechanism::read("gssapi"), None);
    }
}
