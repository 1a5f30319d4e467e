# The MPS control daemon (ranks sharing a GPU run gc3 there only under MPS): functions sourced by
# contrib/quickstart.sh and tests/gpu/gpu-test.sh (bash; not a command).
#
#   mps_answers DIR            a control daemon answers at pipe directory DIR
#   mps_daemon_start DIR LOG   start one at DIR (log directory LOG); 0 when it answers, else 1
#                              with what it said in mps_why
#   mps_daemon_quit DIR        ask it to quit; 0 once it no longer answers (within 10 s)
# shellcheck shell=bash disable=SC2034  # mps_why is for the caller

mps_answers() {
    [ -d "$1" ] && command -v nvidia-cuda-mps-control >/dev/null 2>&1 &&
        echo get_server_list | CUDA_MPS_PIPE_DIRECTORY=$1 timeout 10 nvidia-cuda-mps-control >/dev/null 2>&1
}

mps_daemon_start() {
    local pipe=$1 log=$2
    mps_why=""
    mkdir -p "$pipe" "$log" || { mps_why="cannot create $pipe and $log"; return 1; }
    # its output away from the caller's pipes: a daemon holding one would keep it open
    if ! CUDA_MPS_PIPE_DIRECTORY=$pipe CUDA_MPS_LOG_DIRECTORY=$log nvidia-cuda-mps-control -d \
            </dev/null >"$log/start.out" 2>&1; then
        mps_why="nvidia-cuda-mps-control -d: $(tr '\n' ' ' <"$log/start.out")"
        return 1
    fi
    for _ in $(seq 20); do mps_answers "$pipe" && return 0; sleep 0.5; done
    mps_why="the daemon started at $pipe does not answer ($(cat "$log/start.out" "$log/control.log" 2>/dev/null | tail -3 | tr '\n' ' '))"
    return 1
}

mps_daemon_quit() {
    echo quit | CUDA_MPS_PIPE_DIRECTORY=$1 timeout 30 nvidia-cuda-mps-control >/dev/null 2>&1
    for _ in $(seq 20); do mps_answers "$1" || return 0; sleep 0.5; done
    return 1
}
