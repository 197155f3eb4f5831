# Stops the program at its first MPI_Comm_create_group for good (see
# stop-in-creation.sh); a program that ends first ends gdb with its status.
set breakpoint pending on
break PMPI_Comm_create_group
run
if $_isvoid($_exitcode)
  shell sleep infinity
end
quit $_exitcode
