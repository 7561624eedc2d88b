"""What GPUs cost: catalog queries and refresh from the clouds' price APIs."""
