//! Where `--publish` sends results: the broker's address and the topic
//! prefix, parsed from `mqtt://HOST[:PORT][/PREFIX]` (`mqtts://` for TLS),
//! and the credentials, taken from the environment so that they never show
//! in a process listing.

use super::PublishError;

/// The environment variable holding the broker's user name.
pub const USERNAME_VAR: &str = "CORTEX_MQTT_USERNAME";
/// The environment variable holding the broker's password (read only with
/// a user name).
pub const PASSWORD_VAR: &str = "CORTEX_MQTT_PASSWORD";
/// The environment variable naming the PEM file of the certificate
/// authority an `mqtts://` broker is checked against.
pub const CA_VAR: &str = "CORTEX_MQTT_CA";
/// The environment variable that sets the client id (default
/// `cortex-<process id>`); a broker lets one connection per id.
pub const CLIENT_ID_VAR: &str = "CORTEX_MQTT_CLIENT_ID";

/// A broker and the topics results go to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    /// Host name or address (an IPv6 address without its brackets).
    pub host: String,
    /// TCP port (default 1883, 8883 with TLS).
    pub port: u16,
    /// Topic prefix: stream `k`'s results go to `PREFIX/k/results`
    /// (default `cortex`).
    pub prefix: String,
    /// `mqtts://`: TLS.
    pub tls: bool,
}

impl Target {
    /// Parses `mqtt://HOST[:PORT][/PREFIX]` or `mqtts://…`.
    ///
    /// # Errors
    /// [`PublishError::Url`] for another scheme, an empty host, a port that
    /// is not a number from 1 to 65535, or a prefix with MQTT wildcards
    /// (`+`, `#`) or an empty level.
    pub fn parse(url: &str) -> Result<Target, PublishError> {
        let bad = |why: &str| PublishError::Url {
            url: url.to_string(),
            why: why.to_string(),
        };
        let (tls, rest) = if let Some(r) = url.strip_prefix("mqtt://") {
            (false, r)
        } else if let Some(r) = url.strip_prefix("mqtts://") {
            (true, r)
        } else {
            return Err(bad("expected mqtt://HOST[:PORT][/PREFIX] or mqtts://…"));
        };
        let (authority, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        if authority.contains('@') {
            return Err(bad(&format!(
                "credentials come from {USERNAME_VAR} and {PASSWORD_VAR}, never the URL"
            )));
        }
        let (host, port) = match authority.strip_prefix('[') {
            // [IPv6]:port
            Some(v6) => {
                let (host, after) = v6.split_once(']').ok_or_else(|| bad("no closing `]`"))?;
                (host, after.strip_prefix(':'))
            }
            None => match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            },
        };
        if host.is_empty() {
            return Err(bad("no host"));
        }
        let port = match port {
            None => {
                if tls {
                    8883
                } else {
                    1883
                }
            }
            Some(p) => p
                .parse::<u16>()
                .ok()
                .filter(|&p| p > 0)
                .ok_or_else(|| bad(&format!("port `{p}` is not a number from 1 to 65535")))?,
        };
        let prefix = prefix.trim_end_matches('/');
        let prefix = if prefix.is_empty() { "cortex" } else { prefix };
        if prefix.contains(['+', '#', '\0']) || prefix.split('/').any(str::is_empty) {
            return Err(bad(&format!(
                "topic prefix `{prefix}`: no `+`, `#` or empty levels"
            )));
        }
        Ok(Target {
            host: host.to_string(),
            port,
            prefix: prefix.to_string(),
            tls,
        })
    }

    /// The topic of stream `stream`'s results.
    pub fn topic(&self, stream: u32) -> String {
        format!("{}/{stream}/results", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let t = Target::parse("mqtt://broker.local:1884/site/a").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.prefix.as_str(), t.tls),
            ("broker.local", 1884, "site/a", false)
        );
        assert_eq!(t.topic(3), "site/a/3/results");
        let t = Target::parse("mqtt://127.0.0.1").unwrap();
        assert_eq!((t.port, t.prefix.as_str()), (1883, "cortex"));
        let t = Target::parse("mqtts://[::1]/x/").unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, t.prefix.as_str()),
            ("::1", 8883, "x")
        );
        for bad in [
            "http://h",
            "mqtt://",
            "mqtt://:1883",
            "mqtt://h:0",
            "mqtt://h:70000",
            "mqtt://h:x",
            "mqtt://h/a/#",
            "mqtt://h/a//b",
            "mqtt://u:p@h",
            "mqtt://[::1",
        ] {
            assert!(Target::parse(bad).is_err(), "{bad}");
        }
    }
}
