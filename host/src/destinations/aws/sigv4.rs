//! AWS Signature Version 4 for the AWS destinations' requests (SQS, SNS, EventBridge): the
//! canonical request, the string to sign and the derived signing key, as AWS documents them,
//! with `hmac` and `sha2` (already Weir's). Checked against AWS's published example.

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};

/// An access key.
#[derive(Debug, Clone, Copy)]
pub(super) struct Key<'a> {
    pub id: &'a str,
    pub secret: &'a str,
}

/// What a request is signed for.
#[derive(Debug, Clone, Copy)]
pub(super) struct Scope<'a> {
    pub region: &'a str,
    pub service: &'a str,
    /// `YYYYMMDDTHHMMSSZ`.
    pub amz_date: &'a str,
}

/// A request to sign: method, path, query (already canonical), headers (lower-case names,
/// each signed) and body.
#[derive(Debug, Clone, Copy)]
pub(super) struct Request<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    pub headers: &'a [(&'a str, &'a str)],
    pub body: &'a [u8],
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).unwrap_or_else(|_| unreachable!("any key length"));
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

fn hex_sha256(data: &[u8]) -> String {
    hex::encode(Sha256::digest(data))
}

/// The canonical request and the signed headers' names.
fn canonical(request: &Request<'_>) -> (String, String) {
    let mut headers: Vec<(String, String)> =
        request.headers.iter().map(|(n, v)| (n.to_ascii_lowercase(), v.trim().to_owned())).collect();
    headers.sort();
    let canonical_headers: String = headers.iter().map(|(n, v)| format!("{n}:{v}\n")).collect();
    let signed: Vec<&str> = headers.iter().map(|(n, _)| n.as_str()).collect();
    let signed = signed.join(";");
    let text = format!(
        "{}\n{}\n{}\n{canonical_headers}\n{signed}\n{}",
        request.method,
        request.path,
        request.query,
        hex_sha256(request.body)
    );
    (text, signed)
}

/// The `Authorization` header's value.
pub(super) fn authorization(key: Key<'_>, scope: Scope<'_>, request: &Request<'_>) -> String {
    let (canonical_request, signed) = canonical(request);
    let date = &scope.amz_date[..8];
    let credential_scope = format!("{date}/{}/{}/aws4_request", scope.region, scope.service);
    let to_sign = format!(
        "AWS4-HMAC-SHA256\n{}\n{credential_scope}\n{}",
        scope.amz_date,
        hex_sha256(canonical_request.as_bytes())
    );
    let k_date = hmac(format!("AWS4{}", key.secret).as_bytes(), date.as_bytes());
    let k_region = hmac(&k_date, scope.region.as_bytes());
    let k_service = hmac(&k_region, scope.service.as_bytes());
    let k_signing = hmac(&k_service, b"aws4_request");
    let signature = hex::encode(hmac(&k_signing, to_sign.as_bytes()));
    format!("AWS4-HMAC-SHA256 Credential={}/{credential_scope}, SignedHeaders={signed}, Signature={signature}", key.id)
}

/// `YYYYMMDDTHHMMSSZ` of a time in milliseconds since the epoch.
pub(super) fn amz_date(ms: u64) -> String {
    let text = crate::time::format_millis(ms);
    let digits: String = text[..19].chars().filter(char::is_ascii_digit).collect();
    format!("{}T{}Z", &digits[..8], &digits[8..14])
}

#[cfg(test)]
mod tests {
    use super::*;

    /// AWS's example in "Create a signed AWS API request" (IAM ListUsers, 2015-08-30).
    #[test]
    fn signs_as_aws_published_example() {
        let request = Request {
            method: "GET",
            path: "/",
            query: "Action=ListUsers&Version=2010-05-08",
            headers: &[
                ("Content-Type", "application/x-www-form-urlencoded; charset=utf-8"),
                ("Host", "iam.amazonaws.com"),
                ("X-Amz-Date", "20150830T123600Z"),
            ],
            body: b"",
        };
        let (text, signed) = canonical(&request);
        assert_eq!(signed, "content-type;host;x-amz-date");
        assert_eq!(hex_sha256(text.as_bytes()), "f536975d06c0309214f805bb90ccff089219ecd68b2577efef23edd43b7e1a59");
        let key = Key { id: "AKIDEXAMPLE", secret: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
        let scope = Scope { region: "us-east-1", service: "iam", amz_date: "20150830T123600Z" };
        assert_eq!(
            authorization(key, scope, &request),
            "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/iam/aws4_request, \
             SignedHeaders=content-type;host;x-amz-date, \
             Signature=5d672d79c15b13162d9279b0855cfba6789a8edb4c82c400e06b5924a6f2b5d7"
        );
    }

    #[test]
    fn the_date_is_compact() {
        assert_eq!(amz_date(1_440_938_160_000), "20150830T123600Z");
    }
}
