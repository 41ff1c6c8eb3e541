//! The `conform` binary: parse the command line and dispatch.

use std::process::ExitCode;

use conform::cli::{Cli, Command};
use conform::exit::ExitCodes;

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let cli = match Cli::try_parse_from(&argv) {
        Ok(cli) => cli,
        Err(e) => {
            // --help and --version are "errors" that print to stdout and succeed
            let text = conform::settings::scrub_arguments(&e.render().to_string(), &argv);
            if e.use_stderr() {
                eprint!("{text}");
            } else {
                print!("{text}");
            }
            return ExitCode::from(if e.use_stderr() {
                ExitCodes::CONFIG
            } else {
                ExitCodes::OK
            });
        }
    };
    let listing = match &cli.command {
        None => cli.run.libtest.list,
        Some(Command::Checks(args)) => !args.markdown,
        Some(Command::Completions(_) | Command::Manpage) => true,
        _ => false,
    };
    if listing {
        quiet_on_closed_pipe();
    }
    match cli.command {
        None => conform::harness::run(cli.run),
        Some(Command::Checks(args)) if args.markdown => conform::selftest::checks_command(),
        Some(Command::Selftest(args)) => conform::selftest::command(&args),
        Some(Command::Checks(_)) => {
            println!("{:<28} {:<5} {:<48} title", "id", "level", "cites");
            for check in conform::checks::CHECKS {
                println!(
                    "{:<28} {:<5} {:<48} {}",
                    check.id, check.level, check.cites, check.title
                );
            }
            ExitCode::SUCCESS
        }
        Some(Command::Sweep(args)) => conform::sweep::sweep(args),
        Some(Command::Openapi(args)) => conform::openapi::command(&args),
        Some(Command::Proxy(args)) => conform::proxy::command(&args),
        Some(Command::Diff(args)) => conform::diff::command(&args),
        Some(Command::Peer(args)) => conform::peer::command(&args),
        Some(Command::Completions(args)) => {
            let mut command = Cli::command();
            clap_complete::generate(args.shell, &mut command, "conform", &mut std::io::stdout());
            ExitCode::SUCCESS
        }
        Some(Command::Compare(args)) => conform::compare::command(&args),
        Some(Command::Certify(args)) => conform::certify::command(*args, &argv),
        Some(Command::Verify(args)) => conform::certify::verify_command(&args),
        Some(Command::Manpage) => {
            match clap_mangen::Man::new(Cli::command()).render(&mut std::io::stdout()) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("error: cannot write the manual page: {e}");
                    ExitCode::from(ExitCodes::REPORTS_UNWRITTEN)
                }
            }
        }
        Some(Command::Serve(args)) => match conform::serve::serve(args) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(ExitCodes::CONFIG)
            }
        },
    }
}

/// A listing (`conform --list | head`, `conform checks | head`) ends quietly when its reader
/// goes away, as Unix tools do, instead of panicking on the closed pipe. Only listings: they
/// open no connection, while a run keeps SIGPIPE ignored so that a target closing a connection
/// is an error it reports, never a kill.
fn quiet_on_closed_pipe() {
    #[cfg(unix)]
    // SAFETY: sets the default disposition of one signal, before any thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
