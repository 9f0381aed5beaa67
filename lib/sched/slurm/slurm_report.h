/* SPDX-License-Identifier: MIT */
/* SLURM's host_report operation (lib/sched/sched.h, lib/host_report.h). */
#ifndef DISPATCH_SLURM_REPORT_H
#define DISPATCH_SLURM_REPORT_H

struct host_facts;
struct host_report;

void slurm_host_report(const struct host_facts *f, struct host_report *r);

#endif
