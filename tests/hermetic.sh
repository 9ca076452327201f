# Runs its arguments as a command without the variables pipewright reads
# that this shell holds: every PIPEWRIGHT_* but PIPEWRIGHT_PYTHON (the tests'
# own venv), and Fibe's FIBE_MCP_PIPELINE_* caps. A command in a tmux pane
# starts with whatever environment its tmux server kept, so the end-to-end
# tests start the binary through this, setting what they need after it:
#   sh tests/hermetic.sh env PIPEWRIGHT_DATA_DIR=… pipewright edit flow.yml
for v in $(env | sed -nE 's/^((PIPEWRIGHT|FIBE_MCP_PIPELINE)_[A-Za-z0-9_]*)=.*/\1/p'); do
  [ "$v" = PIPEWRIGHT_PYTHON ] || unset "$v"
done
exec "$@"
