# shellcheck shell=sh
# dispatch_usage_read ID STAGE: what job ID did, from the sampler's files in its stage
# dir (usage_sample.sh: STAGE/usage.ID.NODE, and STAGE/usage.ID_TASK.NODE for a job
# array's tasks), reduced here, never sent whole: per file one MARK_USAGE line
# "JOB|NODE|START|END|SAMPLES|CPU_SECONDS|PEAK_RSS_KIB|CORES|MEM_MIB" (the last two
# what SLURM allocated there, "-" elsewhere), then per GPU one
# MARK_USAGE_GPU line "JOB|NODE|UUID|MEAN_UTIL|PEAK_UTIL|PEAK_MEM_MIB|WH|PEAK_TEMP|
# THROTTLED_SAMPLES|SERIES|RECENT" (utilisation weighted by each sample's span;
# energy the power times the span; SERIES up to 48 comma-separated means of equal
# spans of the GPU's sampled life, "-" where no sample fell; RECENT the mean of the samples
# of the last 30 minutes; "-" for what was never known). Lines the
# reader cannot read are skipped. job_usage.c reads the marks.

dispatch_usage_read() {
	for du_f in "$2/usage.$1".* "$2/usage.$1"_*; do
		[ -f "$du_f" ] || continue
		du_r=${du_f##*/usage.}
		awk -v key="${du_r%%.*}" -v node="${du_r#*.}" -v B=48 '
		function num(v) { return v ~ /^[0-9]+(\.[0-9]+)?$/ }
		$1 == "#" && $2 == "dispatch-usage" && NF == 6 {
			cores = $5 ~ /^[0-9]+$/ ? $5 : "-"
			mem = $6 ~ /^[0-9]+$/ ? $6 : "-"
			next
		}
		NF >= 5 && $1 ~ /^[0-9]+$/ && $2 ~ /^[0-9]+$/ && $5 ~ /^[0-9]+$/ {
			t = $1; dt = $2
			if (!n++ || t - dt < start) start = t - dt
			if (t > end) end = t
			if (num($3) && $3 + 0 > cpu) cpu = $3 + 0
			if (num($4) && $4 + 0 > rss) rss = $4 + 0
			for (i = 6; i + 5 <= NF; i += 6) {
				u = $i
				if (u !~ /^[A-Za-z0-9:.-]+$/) continue
				if (!(u in seen)) { seen[u] = 1; order[++nu] = u }
				if (num($(i + 1)) && dt > 0) {
					us[u] += $(i + 1) * dt; ud[u] += dt
					if ($(i + 1) + 0 > up[u]) up[u] = $(i + 1) + 0
					m = ++sn[u]; st[u, m] = t - dt / 2; sv[u, m] = $(i + 1); sd[u, m] = dt
					if (m == 1 || t - dt < gs[u]) gs[u] = t - dt
					if (t > ge[u]) ge[u] = t
				}
				if (num($(i + 2)) && $(i + 2) + 0 >= mp[u]) { mp[u] = $(i + 2) + 0; mk[u] = 1 }
				if (num($(i + 3))) { e[u] += $(i + 3) * dt; ek[u] = 1 }
				if (num($(i + 4)) && $(i + 4) + 0 >= tp[u]) { tp[u] = $(i + 4) + 0; tk[u] = 1 }
				if ($(i + 5) !~ /^(0x0*|-)$/) th[u]++
			}
		}
		END {
			if (!n) exit
			printf "@MARK_USAGE@ %s|%s|%d|%d|%d|%.2f|%d|%s|%s\n", key, node, start, end, n, cpu, rss,
				(cores == "" ? "-" : cores), (mem == "" ? "-" : mem)
			for (k = 1; k <= nu; k++) {
				u = order[k]
				span = ge[u] - gs[u] > 0 ? ge[u] - gs[u] : 1
				nb = sn[u] < B ? sn[u] : B
				split("", bs); split("", bd)
				for (j = 1; j <= sn[u]; j++) {
					b = int((st[u, j] - gs[u]) * nb / span)
					if (b >= nb) b = nb - 1
					if (b < 0) b = 0
					bs[b] += sv[u, j] * sd[u, j]; bd[b] += sd[u, j]
				}
				rs = rd = 0
				for (j = 1; j <= sn[u]; j++)
					if (st[u, j] >= end - 1800) { rs += sv[u, j] * sd[u, j]; rd += sd[u, j] }
				s = ""
				for (b = 0; b < nb; b++)
					s = s (b ? "," : "") (bd[b] > 0 ? sprintf("%d", bs[b] / bd[b] + 0.5) : "-")
				mean = ud[u] > 0 ? sprintf("%.1f", us[u] / ud[u]) : "-"
				pk = ud[u] > 0 ? up[u] : "-"
				printf "@MARK_USAGE_GPU@ %s|%s|%s|%s|%s|%s|%s|%s|%d|%s|%s\n", key, node, u,
					mean, pk, (mk[u] ? mp[u] : "-"), (ek[u] ? sprintf("%.3f", e[u] / 3600) : "-"),
					(tk[u] ? tp[u] : "-"), th[u], (s == "" ? "-" : s),
					(rd > 0 ? sprintf("%.1f", rs / rd) : "-")
			}
		}' "$du_f"
	done
}
