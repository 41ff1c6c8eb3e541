//! `conform serve`: the embedded reference service, standalone.

use std::io::Write;
use std::path::PathBuf;

use crate::cli::ServeArgs;

/// A name to seed, checked as the API checks names (letters, digits, `-`, `_`, `.`), so that a bad
/// one is a usage error, not a service that fails to start.
fn seed_name(flag: &str, name: Option<String>) -> Result<Option<String>, String> {
    match name {
        Some(name)
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')) =>
        {
            Err(format!(
                "{flag} `{name}`: a name holds only letters, digits, `-`, `_` and `.`"
            ))
        }
        name => Ok(name),
    }
}

/// Runs the reference service on loopback until the process is stopped.
pub fn serve(args: ServeArgs) -> Result<(), String> {
    if list_catalogs(&args) {
        return Ok(());
    }
    let config = configure(&args)?;
    let tls = certificate(&args)?;
    let banner = Banner {
        // A token the operator gave (flag or environment) is theirs: never printed.
        given_token: args.token.as_ref().is_some_and(|t| !t.is_empty()),
        given_admin_token: args.admin_token.as_ref().is_some_and(|t| !t.is_empty()),
        password: config.password.clone(),
        token: config.token.clone(),
        admin_token: config.admin_token.clone(),
        compat: args.compat.clone(),
        seed_organization: config.seed_organization.clone(),
        seed_workspace: config.seed_workspace.clone(),
        seeded: Vec::new(),
    };
    let prepared = conform_reference::Prepared::new(config);
    let banner = Banner {
        seeded: prepared.seeded(),
        ..banner
    };
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
            .await
            .map_err(|e| format!("cannot listen on 127.0.0.1:{}: {e}", args.port))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        // caught before the banner, which tells a caller the service is up
        let stop = crate::exit::Stop::listen();
        let scheme = if tls.is_some() { "https" } else { "http" };
        let trust = tls.as_ref().and_then(|(_, _, file)| file.as_deref());
        banner.print(scheme, addr, trust);
        // Stopped by a signal, the service removes the authority's folder it made.
        let made = tls.as_ref().and_then(|(_, _, file)| file.clone());
        tokio::spawn(async move {
            let code = stop.wait().await;
            if let Some(dir) = made.as_deref().and_then(std::path::Path::parent) {
                let _ = std::fs::remove_dir_all(dir);
            }
            std::process::exit(i32::from(code));
        });
        match tls {
            Some((chain, key, _)) => prepared.serve_tls(listener, &chain, &key).await,
            None => prepared.serve(listener).await.map_err(|e| e.to_string()),
        }
    })
}

/// `--fault list` and `--shape list`: prints the catalog asked for and answers true.
fn list_catalogs(args: &ServeArgs) -> bool {
    if args.fault.iter().any(|f| f == "list") {
        for fault in conform_reference::fault_catalog() {
            let name = match fault.arg {
                Some(arg) => format!("{}={arg}", fault.name),
                None => fault.name.to_string(),
            };
            println!("{name:<32} {}", fault.description);
        }
        return true;
    }
    if args.shape.iter().any(|s| s == "list") {
        for shape in conform_reference::shape_catalog() {
            println!("{:<32} {}", shape.name, shape.description);
        }
        return true;
    }
    false
}

/// The service's configuration from the flags: tokens, faults, shapes, compat, seeds, public URL.
fn configure(args: &ServeArgs) -> Result<conform_reference::Config, String> {
    let mut config = conform_reference::Config::default();
    if let Some(token) = args.token.clone().filter(|t| !t.is_empty()) {
        config.token = token;
    }
    if let Some(token) = args.admin_token.clone().filter(|t| !t.is_empty()) {
        config.admin_token = token;
    }
    for fault in &args.fault {
        config
            .faults
            .push(fault.parse().map_err(|e| format!("--fault: {e}"))?);
    }
    for shape in &args.shape {
        config
            .shapes
            .push(shape.parse().map_err(|e| format!("--shape: {e}"))?);
    }
    config.compat = args.compat.parse().map_err(|e| format!("--compat: {e}"))?;
    config.seed_organization = seed_name("--seed-organization", args.seed_organization.clone())?;
    config.seed_workspace = seed_name("--seed-workspace", args.seed_workspace.clone())?;
    if let Some(url) = &args.public_url {
        let parsed = url::Url::parse(url).map_err(|e| format!("--public-url {url}: {e}"))?;
        if !matches!(parsed.scheme(), "http" | "https") || parsed.host_str().is_none() {
            return Err(format!(
                "--public-url {url}: not an http(s) URL with a host"
            ));
        }
        config.public_url = Some(url.trim_end_matches('/').to_string());
    }
    Ok(config)
}

/// The certificate chain, key and (when made now) the file of the authority to trust.
type Certificate = (String, String, Option<PathBuf>);

/// The certificate: the user's own, or one made now whose authority is written to a file.
fn certificate(args: &ServeArgs) -> Result<Option<Certificate>, String> {
    Ok(match (&args.tls_cert, &args.tls_key) {
        (Some(cert), Some(key)) => {
            let read = |p: &PathBuf| {
                std::fs::read_to_string(p).map_err(|e| format!("cannot read {}: {e}", p.display()))
            };
            Some((read(cert)?, read(key)?, None))
        }
        _ if args.tls => {
            let made = conform_reference::generate_certificate()?;
            let dir = std::env::temp_dir().join(format!("conform-serve-{}", std::process::id()));
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let file = dir.join("ca.pem");
            std::fs::write(&file, &made.ca_pem)
                .map_err(|e| format!("cannot write {}: {e}", file.display()))?;
            Some((made.chain_pem, made.key_pem, Some(file)))
        }
        _ => None,
    })
}

/// What the banner tells the operator.
struct Banner {
    given_token: bool,
    given_admin_token: bool,
    token: String,
    admin_token: String,
    password: String,
    compat: String,
    seed_organization: Option<String>,
    seed_workspace: Option<String>,
    seeded: Vec<(String, String)>,
}

impl Banner {
    /// Printed on purpose: the operator started this service and needs its tokens, its password
    /// and what it seeded. A closed stdout (the caller read the address and went away) must not
    /// stop the service.
    fn print(&self, scheme: &str, addr: std::net::SocketAddr, trust: Option<&std::path::Path>) {
        let mut out = std::io::stdout();
        let _ = writeln!(out, "reference service at {scheme}://{addr}");
        let shown = |given: bool, token: &str, flag: &str, var: &str| {
            if given {
                format!("(yours, from {flag} or {var})")
            } else {
                token.to_string()
            }
        };
        let _ = writeln!(
            out,
            "  token:       {}",
            shown(self.given_token, &self.token, "--token", "CONFORM_TOKEN")
        );
        let _ = writeln!(
            out,
            "  admin token: {}",
            shown(
                self.given_admin_token,
                &self.admin_token,
                "--admin-token",
                "CONFORM_ADMIN_TOKEN"
            )
        );
        let _ = writeln!(out, "  password:    {}", self.password);
        for (kind, id) in &self.seeded {
            let _ = writeln!(out, "  seeded {kind}: {id}");
        }
        if let Some(org) = &self.seed_organization {
            let workspace = self
                .seed_workspace
                .as_deref()
                .map(|ws| format!(" workspaces {{ name = \"{ws}\" }}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  terraform:   cloud {{ hostname = \"localhost:{}\" organization = \"{org}\"{workspace} }}",
                addr.port()
            );
        }
        if let Some(file) = trust {
            let _ = writeln!(out, "  trust this file: {}", file.display());
        }
        let _ = writeln!(
            out,
            "  settings:    yours to change: run conform with --allow-instance-changes"
        );
        // The last line of the banner.
        let _ = writeln!(out, "  compat:      {}", self.compat);
        let _ = out.flush();
    }
}
