/* SPDX-License-Identifier: MIT */
/*
 * What every command file sees: its descriptor, its option table, the parsed
 * arguments and the context the dispatcher prepared (global options, inventory).
 */
#ifndef DISPATCH_CMD_H
#define DISPATCH_CMD_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/error.h"
#include "base/termesc.h"
#include "base/util.h"
#include "inventory/sweep.h"
#include "jobs/job_state.h"
#include "jobs/jobs.h"
#include "sched/sched.h"

struct inventory;
struct ssh_ctx;
struct dp_ctx;
struct ledger_job;

/* What an option's value is and where it goes (git's parse-options): options.c
 * converts it, words the error and stores it, once for every command. */
enum dp_opt_kind {
	DP_OPT_FLAG = 0,  /* bool *: true */
	DP_OPT_STRING,    /* const char **: the argument (the last one given) */
	DP_OPT_INT,       /* int *: a whole number from min to max */
	DP_OPT_SECONDS,   /* double *: seconds from min to max (0: no upper limit); whole
			     ones only when .whole */
	DP_OPT_SIZE,      /* long *: bytes, N with K, M, G or T (powers of 1024) from min
			     to max (0: no upper limit) */
	DP_OPT_WORD,      /* int *: the index of the argument among the words of complete
			     ("words:a b") */
	DP_OPT_LIST,      /* const char ***: the arguments of a repeatable option, in
			     order, NULL-terminated (the array is the caller's to free) */
	DP_OPT_CMDMODE,   /* int *: .mode; two options of one variable exclude each other */
	DP_OPT_CALLBACK,  /* .cb(ctx, o, arg) in command-line order (o->value: its
			     variable): 0, or an exit status (reported) */
	DP_OPT_GLOBAL,    /* the global options: .mode says which (options.c) */
};

/* One entry of an option table (OPT_* below); the table ends with OPT_END. Usage,
 * -h, the man-page check and the completion scripts all come from it. */
struct dp_option {
	char short_name;        /* 0 for none */
	const char *long_name;  /* NULL for none */
	const char *argname;    /* NULL: a flag; else the argument's name in -h ("N", "FILE") */
	const char *help;
	const char *complete;   /* completion of the argument: "file", "dir", "host",
				   "words:a b c", or NULL for none */
	enum dp_opt_kind kind;
	void *value;            /* where the value goes (per kind) */
	double min, max;        /* INT, SECONDS, SIZE: the range */
	bool whole;             /* SECONDS: whole seconds only */
	const char *bad;        /* the error for a bad value, "%s" standing for the value;
				   NULL: "--NAME wants <what the kind and range say>, not '%s'" */
	int mode;               /* CMDMODE: the value it stores; GLOBAL: which one */
	int (*cb)(const struct dp_ctx *ctx, const struct dp_option *o, const char *arg);
};

/* V as a void * that must have type T (a warning, so an error with -Werror, else). */
#define OPT_PTR(T, V) (1 ? (V) : (T)0)
#define OPT_BOOL(S, L, V, H) { .short_name = (S), .long_name = (L), .help = (H), \
	.kind = DP_OPT_FLAG, .value = OPT_PTR(bool *, V) }
#define OPT_STRING(S, L, V, A, H, C) { .short_name = (S), .long_name = (L), .argname = (A), \
	.help = (H), .complete = (C), .kind = DP_OPT_STRING, .value = OPT_PTR(const char **, V) }
#define OPT_LIST(S, L, V, A, H, C) { .short_name = (S), .long_name = (L), .argname = (A), \
	.help = (H), .complete = (C), .kind = DP_OPT_LIST, .value = OPT_PTR(const char ***, V) }
#define OPT_INT(S, L, V, A, H, MIN, MAX) { .short_name = (S), .long_name = (L), .argname = (A), \
	.help = (H), .kind = DP_OPT_INT, .value = OPT_PTR(int *, V), .min = (MIN), .max = (MAX) }
/* Seconds: OPT_SECONDS(..., .min = 1, .whole = true) (designators after the help). */
#define OPT_SECONDS(S, L, V, A, H, ...) { .short_name = (S), .long_name = (L), .argname = (A), \
	.help = (H), .kind = DP_OPT_SECONDS, .value = OPT_PTR(double *, V), __VA_ARGS__ }
#define OPT_SIZE(S, L, V, A, H, ...) { .short_name = (S), .long_name = (L), .argname = (A), \
	.help = (H), .kind = DP_OPT_SIZE, .value = OPT_PTR(long *, V), __VA_ARGS__ }
#define OPT_WORD(S, L, V, A, H, WORDS) { .short_name = (S), .long_name = (L), .argname = (A), \
	.help = (H), .complete = "words:" WORDS, .kind = DP_OPT_WORD, .value = OPT_PTR(int *, V) }
#define OPT_CMDMODE(S, L, V, MODE, H) { .short_name = (S), .long_name = (L), .help = (H), \
	.kind = DP_OPT_CMDMODE, .value = OPT_PTR(int *, V), .mode = (MODE) }
#define OPT_CALLBACK(S, L, V, A, H, C, CB) { .short_name = (S), .long_name = (L), .argname = (A), \
	.help = (H), .complete = (C), .kind = DP_OPT_CALLBACK, .value = (V), .cb = (CB) }
#define OPT_HOSTLIST(S, L, V, A, H) \
	OPT_CALLBACK(S, L, OPT_PTR(char ***, V), A, H, "host", opt_hostlist)
#define OPT_END { 0 }
#define OPT_IS_END(o) (!(o)->short_name && !(o)->long_name)

/* Rules between a command's options, checked in order once all are stored (before
 * the command runs); the first broken one is reported with msg (exit 2), "%s"
 * standing for the option of a that was given (the last one of them on the line).
 * a and b list option spellings ("-H --timeout"); "--json" is the global one. */
enum dp_rule_kind {
	DP_EXCLUDES,    /* an option of a with one of b */
	DP_REQUIRES,    /* an option of a without any of b */
	DP_NEEDS_ONE,   /* none of a */
};
struct dp_rule {
	enum dp_rule_kind kind;
	const char *a, *b;
	const char *msg;
};

enum {
	CMD_NEEDS_INVENTORY = 1 << 0, /* fail (exit 2) when no inventory can be loaded */
	CMD_WANTS_INVENTORY = 1 << 1, /* load it when there is one */
	CMD_POSIX_ORDER = 1 << 2,     /* options stop at the first operand (run, submit: the
					 operands are a command with options of its own) */
	CMD_NEEDS_SSH = 1 << 3,       /* ctx->ssh: what ssh_session_open needs (prompts on
					 the terminal, -v progress, the inventory's hosts) */
	CMD_LATE_RULES = 1 << 4,      /* the command checks its rules (options_rules) itself,
					 once it has read what they come after (submit: the
					 job file and command, reported first) */
	CMD_NEEDS_SESSION = 1 << 5,   /* with CMD_NEEDS_SSH: ctx->session, opened by the
					 dispatcher to the host session_host names (the
					 command's operands resolved), closed after fn */
};

/* An option as given on the command line. */
union dp_value { int i; long l; double d; };
struct dp_optval {
	const char *arg;        /* NULL for flags */
	union dp_value v;       /* a typed value, converted */
	const struct dp_option *opt; /* the table entry */
};

struct dp_args {
	struct dp_optval *opts; /* as given, in order (the values are in the variables) */
	size_t nopts;
	char **pos;             /* operands, borrowed from argv */
	int npos;
	int dashdash;           /* index in pos of the first operand after "--", or -1 */
};

struct dp_ctx {
	const char *inventory_path;   /* resolved path, or NULL when there is none */
	struct inventory *inv;        /* loaded per the command's flags, else NULL */
	const char *ssh_config_path;  /* -F, $DISPATCH_SSH_CONFIG, or NULL for ~/.ssh/config */
	const char *ssh_home;         /* ~ and %d in ssh_config: the passwd entry's home, as
					 ssh takes it (never $HOME) */
	bool json;
	int verbosity;                /* 0 normal, > 0 with -v, < 0 with -q */
	const struct dispatch_cmd *cmd;
	struct ssh_ctx *ssh;          /* CMD_NEEDS_SSH: prepared by the dispatcher, else NULL */
	struct ssh_session *session;  /* CMD_NEEDS_SESSION: open to session_host's host */
};

struct dispatch_cmd {
	const char *name;             /* a subcommand's is its full name: "hosts show" */
	const char *summary;          /* one line for 'dispatch -h' */
	const char *usage;            /* synopsis after "dispatch NAME "; forms split by '\n' */
	const char *description;      /* a short paragraph for -h */
	const struct dp_option *opts;
	const struct dp_rule *rules;  /* NULL, or ending with an entry whose msg is NULL */
	int min_args, max_args;       /* operand counts; max -1 for no limit */
	unsigned flags;
	int (*fn)(struct dp_ctx *ctx, const struct dp_args *args);
	/* CMD_NEEDS_SESSION: what comes before the connection (the operands checked and
	 * resolved, a port bound), then the ssh destination into *host (borrowed until
	 * fn returns): 0, or an exit status (reported). */
	int (*session_host)(struct dp_ctx *ctx, const struct dp_args *args, const char **host);
	/* NULL-terminated, or NULL: when given, a first operand names one of them, and
	 * the dispatcher runs it as a command of its own (its options, operand counts,
	 * flags; usage and completions list it); the command's own fn gets no operands. */
	const struct dispatch_cmd *const *subcommands;
};

/* The sorted command table (cmd/dispatch.c). */
extern const struct dispatch_cmd *const dispatch_commands[];
extern const size_t dispatch_ncommands;
extern const struct dp_option dispatch_global_options[];

/* cmd/options.c */
const char *subcommand_word(const struct dispatch_cmd *sub);   /* "show" of "hosts show" */
bool options_of(const struct dp_option *opts, const struct dp_option *o); /* o in opts */
int options_parse(const struct dispatch_cmd *cmd, int argc, char **argv, struct dp_ctx *ctx,
		  struct dp_args *out);
/* Stores the values into the table's variables and checks cmd's rules (unless
 * CMD_LATE_RULES): 0, or the exit status (reported). */
int options_store(const struct dp_ctx *ctx, const struct dispatch_cmd *cmd,
		  const struct dp_args *args);
/* The rules of ctx->cmd: 0, or the exit status of the first one broken (reported). */
int options_rules(const struct dp_ctx *ctx, const struct dp_args *args);
/* cmd/option-values.c: a typed value into v (per o->kind); 0, or -1 (reported). */
int option_value(const struct dispatch_cmd *cmd, const struct dp_option *o, const char *arg,
		 union dp_value *v);
/* An OPT_CALLBACK's: arg's comma-separated words added to the strv at o->value
 * (repeatable options such as --cluster). */
int option_add_words(const struct dp_ctx *ctx, const struct dp_option *o, const char *arg);
void args_release(struct dp_args *args);
void usage_print(FILE *f, const struct dispatch_cmd *cmd);
const char *options_spelling(const struct dp_option *o); /* "--chip" for messages */

/* cmd/output.c: everything that talks to the user goes through here */
void error_msg(const char *fmt, ...) _printf_(1, 2);     /* "dispatch: <msg>" on stderr */
void warning_msg(const char *fmt, ...) _printf_(1, 2);   /* "dispatch: warning: <msg>" */
void note_msg(const char *fmt, ...) _printf_(1, 2);      /* "dispatch: <msg>": the caller
							     decides whether to say it */
void info_msg(const struct dp_ctx *ctx, const char *fmt, ...) _printf_(2, 3); /* only with -v */
int report_error(const struct dp_error *e);               /* prints, returns the exit status */
/* -H EXPR (OPT_HOSTLIST): appends the hosts of a hostlist expression not in
 * *o->value (char ***) yet; 0, or the exit status of a bad expression (reported). */
int opt_hostlist(const struct dp_ctx *ctx, const struct dp_option *o, const char *expr);
int usage_error(const struct dp_ctx *ctx, const char *fmt, ...) _printf_(2, 3); /* exit 2 */
/* The same for a command named outright ("" for dispatch itself, "hosts show"). */
int usage_error_cmd(const char *name, const char *fmt, ...) _printf_(2, 3);
struct cJSON;
void json_print(struct cJSON *doc);                       /* prints and frees */
void json_add_str_or_null(struct cJSON *o, const char *key, const char *value);
/* "container": {"runtime", "image"} for a job in an image, else null. */
void json_add_container(struct cJSON *o, const char *runtime, const char *image);
void json_add_int_or_null(struct cJSON *o, const char *key, long value); /* null when < 0 */

/* A text table on stdout: ncols cells a row, added in order; each column as wide as
 * its widest cell (or cols[c].width, per line as printf's "%-*s"), the last column
 * never padded. */
struct table_col {
	int width;      /* > 0: this fixed width instead of the widest cell's */
	bool right;     /* right-aligned */
};
struct table {
	size_t ncols;
	const char *sep;              /* between columns; NULL for two spaces */
	const struct table_col *cols; /* ncols entries, or NULL: all left-aligned, fitted */
	bool trim;                    /* no blanks at the end of a line (empty last cells) */
	char **cells;
	size_t n;
};
void table_add(struct table *t, const char *cell);
void table_addf(struct table *t, const char *fmt, ...) _printf_(2, 3);
void table_take(struct table *t, char *cell);            /* takes ownership */
void table_row(struct table *t, const char *first, ...) __attribute__((sentinel)); /* cells, then NULL */
void table_print(struct table *t);                       /* prints and empties t */
bool stdout_is_tty(void);
/* Whether the locale (LC_ALL, else LC_CTYPE, else LANG) is UTF-8: blocks, not ASCII. */
bool utf8_locale(void);
/* Output callbacks (struct ssh_exec) that pass a remote command's output through. */
int pass_stdout(void *data, const char *buf, size_t len);
/* Text from a remote host (its stderr), line by line with control characters
 * escaped (printable()). */
void print_remote_text(FILE *f, const char *text);
int pass_stderr(void *data, const char *buf, size_t len);
bool stderr_is_tty(void);

/* cmd/ssh-tty.c: what ssh_session_open needs, prompts on /dev/tty, -v progress */
struct ssh_ctx;
struct strbuf;
void cmd_ssh_ctx(const struct dp_ctx *ctx, struct ssh_ctx *sc);
/* An ssh -t session: with stdin a terminal, x becomes interactive (that terminal,
 * resized on SIGWINCH, raw once the remote side holds it); tty_raw_end restores it. */
struct ssh_exec;
struct ssh_session;
void tty_session(struct ssh_exec *x);
void tty_raw_end(void);
/* A session to an ssh destination (inventory_ssh_destination's) for ctx: the
 * dispatcher's for CMD_NEEDS_SESSION, and the one a command opens once it has
 * started (submit's, notebook's, logs for submit --follow). 0, or -1 (err). */
int session_open(const struct dp_ctx *ctx, const char *dest, struct ssh_session **ss,
		 struct dp_error *err);
/* One command on an inventory host (or ssh alias) over a connection of its own:
 * ssh_session_open then ssh_exec_capture. */
int host_exec_capture(const struct dp_ctx *ctx, const char *host, const char *command,
		      struct strbuf *out, struct strbuf *errout, int *status, struct dp_error *err);

/* cmd/hosts-show.c: 'hosts show HOST' and 'hosts discover HOST', subcommands of hosts */
extern const struct dispatch_cmd dispatch_cmd_hosts_show;
extern const struct dispatch_cmd dispatch_cmd_hosts_discover;
extern const struct dispatch_cmd dispatch_cmd_hosts_resolve;
extern const struct dispatch_cmd dispatch_cmd_notebook_sync;

/* cmd/hosts-show.c: a plain host's (or a node's) GPU health and XID lines, as hosts
 * show --health and top --health print them. */
struct gpu_health_report;
void gpu_health_print(const char *host, const struct gpu_health_report *g);

/* cmd/solve-check.c: solve with --check: asks the hosts that fit on paper what is
 * free now (in parallel) and solves with their answers. res points into *keep: free
 * it with solve_checked_free after solve_result_release. Returns 0 or the exit
 * status of a bad request (reported). */
struct solve_request;
struct solve_result;
int solve_checked(const struct dp_ctx *ctx, const struct solve_request *req,
		  struct solve_result *res, void **keep);
void solve_checked_free(void *keep);

/* cmd/job-args.c: JOB operands resolved through the ledger, grouped by host */
struct jobref;
struct ledger;
struct ledger_job;
/* A SWEEP operand (lib/jobs/sweeps.h): its ledger rows, each a job of the set. */
struct job_sweep {
	char *id;
	const char *arg;
	struct ledger_job *rows;      /* oldest first */
	size_t nrows;
};
struct job_set {
	struct ledger *ledger;
	struct jobref *refs;          /* one per JOB operand, and per job of a SWEEP's */
	size_t n;
	char **hosts;                 /* strv: each host once, in the order first named */
	size_t njobs;                 /* the JOB operands among refs */
	struct job_sweep *sweeps;     /* the SWEEP operands, in order */
	size_t nsweeps;
};
int job_args_resolve(struct dp_ctx *ctx, char *const *args, size_t nargs, const char *host_opt,
		     struct job_set *set);                /* 0, or the exit status (printed) */
void job_set_release(struct job_set *set);
bool job_is_plain(const struct dp_ctx *ctx, const struct jobref *r);
char *job_stage_dir(const struct jobref *r);       /* plain jobs: from the ledger; caller frees */
struct ledger_job;
char *ledger_stage_dir(const struct ledger_job *j); /* its script's dir, or NULL; caller frees */

/* cmd/job-detail.c: a JOB operand as lib/jobs's target (its stage dir into
 * *stage_dir: free it after the target), a host as lib/jobs's, where logs finds a
 * job's output, the log tail printed. */
struct jobs_target;
void jobs_target_of(const struct dp_ctx *ctx, const struct jobref *r, struct jobs_target *t,
		    char **stage_dir);
/* The same for a row of the ledger (jobs, jobs --usage, hosts show). */
void ledger_target_of(const struct dp_ctx *ctx, const struct ledger_job *j, struct jobs_target *t,
		      char **stage_dir);
/* An inventory host (or ssh alias) for lib/jobs (a CMD_NEEDS_SSH command's): its
 * session opened on first use over ctx->ssh; the caller closes h.ss. */
struct jobs_host jobs_host_of(const struct dp_ctx *ctx, const char *host);
/* The W&B page of a run whose attempts continue one W&B run (the ledger's wandb_run),
 * when its host's cluster names entity and project; NULL otherwise. Caller frees. */
char *job_wandb_url(const struct dp_ctx *ctx, const struct ledger_job *rec);
/* A sweep's task (the ledger's sweep, row "ID_K"): its values, "sweep-ID task K/N:
 * lr=0.1 seed=1" for the text, "sweep": {"id", "index", "size", "params": {NAME:
 * VALUE}} in o for --json; NULL and nothing for any other row. */
struct cJSON;
char *job_sweep_text(const struct jobref *r, const struct job_state *row);
void job_sweep_json(struct cJSON *o, const struct jobref *r, const struct job_state *row);
/* Where a job writes its output (SLURM, its accounting, else the ledger;
 * JOB_LOG_ERR_OR_OUT: its stderr, or its output when they are one file), over ss. */
int job_log_path(struct ssh_session *ss, const struct jobref *r, enum job_log which, char **path,
		 struct dp_error *err);
void job_tail_print(const struct job_tail *t, const char *job);   /* indented lines */

/* cmd/cmd-status.c: the rows of every host asked (status_query_hosts: each host's
 * jobs of set in one exchange, as want asks, the hosts at once), each with its
 * operand; errors printed in the hosts' order, the worst exit status kept. */
struct status_answer {
	const struct dp_ctx *ctx;
	struct jobs_result res;
	const struct jobref **refs;     /* per row */
	int status;                     /* the exit status so far */
};
void status_query_hosts(const struct dp_ctx *ctx, const struct job_set *set, unsigned want,
			struct status_answer *a);
void status_answer_release(struct status_answer *a);

/* cmd/sweep-view.c: a SWEEP's tasks as one table (status, wait): built from the
 * answers about its jobs (res's rows, refs[i] the operand of row i), sorted by a
 * parameter or metric (sort "NAME", "-NAME" descending: DPE_INPUT when the sweep
 * has no such name), printed, or as JSON. */
struct sweep_task;
struct jobs_result;
struct sweep_view {
	const struct job_sweep *js;
	struct sweep sw;
	size_t size;
	struct sweep_task *tasks;     /* [size], by index */
	size_t *order;                /* the indexes in the order shown */
	char **metrics;               /* strv: every metric name, in the order first seen */
};
int sweep_view_build(const struct job_sweep *js, const struct jobs_result *res,
		     const struct jobref *const *refs, struct sweep_view *v, struct dp_error *err);
int sweep_view_sort(struct sweep_view *v, const char *sort, struct dp_error *err);
char *sweep_view_summary(const struct sweep_view *v);   /* "6 tasks: 5 COMPLETED, 1 FAILED" */
void sweep_view_text(const struct sweep_view *v);
struct cJSON *sweep_view_json(const struct sweep_view *v);
void sweep_view_release(struct sweep_view *v);
/* Every sweep of set as a table (ctx->json: {"sweeps": [...]}) from the answers a; the
 * exit status: a's, or DPE_INPUT for a bad sort. *all_completed (may be NULL): every
 * task of every sweep COMPLETED. */
int sweep_status_print(const struct status_answer *a, const struct job_set *set,
		       const char *sort, bool *all_completed);
/* cmd/usage-view.c: status --usage's part below the table, what each job did */
void usage_view_print(const struct status_answer *a);
/* cmd/jobs-usage.c: jobs --usage, GPU-hours of recs[0..n) per host or day (by) */
struct ledger_job;
int jobs_usage_print(const struct dp_ctx *ctx, struct ledger_job *recs, size_t n, const char *by);
/* The samples of host's jobs among recs[0..n) (those with a job id), in one
 * exchange over ss (NULL: a connection of its own): res's rows, target k being
 * recs[at[k]]; 0, or an exit status (said). */
struct jobs_result;
struct ssh_session;
int jobs_usage_query(const struct dp_ctx *ctx, struct ssh_session *ss, const char *host,
		     const struct ledger_job *recs, size_t n, struct jobs_result *res, size_t *at);
/* cmd/hosts-idle.c: hosts show's idle GPUs of dispatch's running jobs on a SLURM host
 * (doc: into its "idle_gpus"; NULL: printed) */
struct cJSON;
int hosts_idle_gpus(const struct dp_ctx *ctx, const char *host, struct cJSON *doc);

/* cmd/cmd-wait.c: wait's polling for these JOB operands, its output and exit status;
 * tail: the log tail of jobs that ended without COMPLETED. */
int wait_for_jobs(struct dp_ctx *ctx, char *const *jobs, size_t n, const char *host_opt,
		  double interval, double timeout, bool until_running, bool tail);
/* cmd/cmd-logs.c: print (follow: until the job ends) a job's output; the exit status */
int logs_print(struct dp_ctx *ctx, const char *job, const char *host_opt, bool follow,
	       bool want_err);
/* cmd/submit-attach.c: submit --wait / --follow after the job was submitted: waits
 * (following its output) until it ends; Ctrl-C detaches, a second within 2 s cancels
 * it. jobs: the job, or a sweep's job arrays (all waited for and cancelled; the
 * first's output followed). The exit status, as wait's (130 when detached). */
int submit_attach(struct dp_ctx *ctx, char *const *jobs, bool follow, bool tail);

/* cmd/submit-attach.c: scancel (or a plain host's cancel) of one job over a connection
 * of its own, saying so; 0, or the exit status (reported). */
int cancel_one_job(struct dp_ctx *ctx, const char *job);

/* cmd/cmd-forward.c: Ctrl-C (SIGINT), SIGTERM and SIGHUP set the flag it returns
 * (the signal's number) instead of ending dispatch, SIGPIPE is ignored; forward_serve carries connections
 * to the listening fd lfd over s to remote_host:remote_port until then. */
volatile sig_atomic_t *forward_catch_signals(void);
struct ssh_session;
int forward_serve(const struct dp_ctx *ctx, struct ssh_session *s, int lfd, const char *remote_host,
		  int remote_port, struct dp_error *err);

/* cmd/cmd-notebook.c: notebook and notebook attach (their options: cmd/cmd-submit.c) */
#define NOTEBOOK_TIMEOUT 300    /* seconds, the default --timeout */
struct jobspec;
struct notebook_opts {
	int local_port;         /* --port; 0: a free one */
	bool detach, cancel_on_exit;
	double timeout;         /* seconds until the server must answer */
	bool fresh;             /* just submitted: a timeout cancels the job */
	const char *work_dir;   /* the job's, for --json (NULL when not known) */
	char *token;            /* notebook_spec's */
	int listen_fd;          /* the tunnel's port, bound before submitting; -1: not yet */
};
/* The notebook job: its command, name and token (into the environment). */
int notebook_spec(struct jobspec *cli, struct notebook_opts *o);
void notebook_opts_release(struct notebook_opts *o);
/* Binds the tunnel's local port (unless detach): a busy --port fails before any job
 * is submitted. 0, or the exit status (reported). */
int notebook_listen(struct notebook_opts *o);
/* Waits until JOB's server answers, then tunnels to it until Ctrl-C (or, with
 * detach, prints where it is); the exit status. */
int notebook_session(struct dp_ctx *ctx, const char *job, struct notebook_opts *o);

/* cmd/hosts-check.c: dispatch hosts --check on these host names; the exit status */
int hosts_check(struct dp_ctx *ctx, char **names, int timeout, long fanout);

/* Command descriptors, one per file cmd/cmd-NAME.c. */
extern const struct dispatch_cmd dispatch_cmd_cancel;
extern const struct dispatch_cmd dispatch_cmd_completion;
extern const struct dispatch_cmd dispatch_cmd_cp;
extern const struct dispatch_cmd dispatch_cmd_forward;
extern const struct dispatch_cmd dispatch_cmd_hostlist;
extern const struct dispatch_cmd dispatch_cmd_hosts;
extern const struct dispatch_cmd dispatch_cmd_jobs;
extern const struct dispatch_cmd dispatch_cmd_logs;
extern const struct dispatch_cmd dispatch_cmd_notebook;
extern const struct dispatch_cmd dispatch_cmd_queue;
extern const struct dispatch_cmd dispatch_cmd_run;
extern const struct dispatch_cmd dispatch_cmd_shell;
extern const struct dispatch_cmd dispatch_cmd_ship;
extern const struct dispatch_cmd dispatch_cmd_solve;
extern const struct dispatch_cmd dispatch_cmd_status;
extern const struct dispatch_cmd dispatch_cmd_submit;
extern const struct dispatch_cmd dispatch_cmd_submit_packed;
extern const struct dispatch_cmd dispatch_cmd_top;
extern const struct dispatch_cmd dispatch_cmd_wait;

#endif
