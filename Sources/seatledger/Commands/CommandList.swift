/// Every subcommand, in the order `seatledger --help` lists them. Help, "did you mean",
/// completions and `help --json` are all derived from this list and each command's declarations.
let commands: [any Command.Type] = [
    InitCommand.self, ConfigCommand.self, IngestCommand.self, RecordCommand.self, VerifyCommand.self,
    QuarantineCommand.self, EventsCommand.self, CheckCommand.self, GroupsCommand.self, GroupCommand.self,
    MemberCommand.self, RebuildCommand.self, ReplayCommand.self, DiffCommand.self, AuditCommand.self, EnqueueCommand.self,
    DemoCommand.self, BackfillCommand.self, ReconcileCommand.self, SeatsCommand.self, APIConfigCommand.self,
    CopyCommand.self, CompletionsCommand.self,
]

/// The exit statuses `seatledger` as a whole can return (each command's help lists its own).
let allExitStatuses: [ExitStatus] = [
    .success,
    ExitStatus(.findings, "a check found something (verify, check, copy, diff, reconcile: see the command's help)"),
    .error, .quarantined,
    ExitStatus(.interrupted, "interrupted (SIGINT/SIGTERM) before finishing; what was committed is kept: re-run to continue"),
]
