//! `conform serve`: the embedded reference service, standalone.

use std::io::Write;

use crate::cli::ServeArgs;

/// Runs the reference service on loopback until the process is stopped.
pub fn serve(args: ServeArgs) -> Result<(), String> {
    if args.fault.iter().any(|f| f == "list") {
        for fault in conform_reference::fault_catalog() {
            let name = match fault.arg {
                Some(arg) => format!("{}={arg}", fault.name),
                None => fault.name.to_string(),
            };
            println!("{name:<32} {}", fault.description);
        }
        return Ok(());
    }
    if args.shape.iter().any(|s| s == "list") {
        for shape in conform_reference::shape_catalog() {
            println!("{:<32} {}", shape.name, shape.description);
        }
        return Ok(());
    }
    let mut config = conform_reference::Config::default();
    if let Some(token) = args.token {
        config.token = token;
    }
    if let Some(token) = args.admin_token {
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
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.port))
            .await
            .map_err(|e| format!("cannot listen on 127.0.0.1:{}: {e}", args.port))?;
        let addr = listener.local_addr().map_err(|e| e.to_string())?;
        // Printed on purpose: the operator started this service and needs its tokens. A closed
        // stdout (the caller read the address and went away) must not stop the service.
        let mut out = std::io::stdout();
        let _ = writeln!(out, "reference service at http://{addr}");
        let _ = writeln!(out, "  token:       {}", config.token);
        let _ = writeln!(out, "  admin token: {}", config.admin_token);
        let _ = out.flush();
        conform_reference::serve(listener, config)
            .await
            .map_err(|e| e.to_string())
    })
}
