"""The GPU -> host direction of shared maps on gpu_to_host: a gpu probe writes the launch's
block count into @grid; after each synchronization a host uprobe on report(BLOCKS) must read
that launch's value, and END the last one."""
import re


def gpu_to_host_case(a, gpubt_case, plain):
    want = [3, 7, 12, 5, 9, 2]

    def check(p):
        seen = [(int(x), int(y)) for x, y in re.findall(r'^report (\d+) host sees (\d+)$',
                                                         p.stdout, re.M)]
        end = re.search(r'^end (\d+)$', p.stdout, re.M)
        ok = [b for b, _ in seen] == want and all(b == v for b, v in seen) and \
            bool(end) and int(end.group(1)) == want[-1]
        return p.returncode == 0 and ok, f'exit {p.returncode}; (reported, host saw) {seen}; ' \
            f'{end.group(0) if end else "no end line"}'
    gpubt_case(a, 'issue6: a map gpu probes write, read by a host uprobe after each sync and END',
               'gpu:kretprobe:gridKernel /tid == 0/ < @grid = gdim_x; > '
               f'uprobe:{a.bin}/gpu_to_host:report {{ printf("report %d host sees %d\\n", arg0, '
               '@grid); } END { printf("end %d\\n", @grid); }',
               f'{a.bin}/gpu_to_host', check, plain)
