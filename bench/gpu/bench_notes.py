"""The end of a GPU benchmark's output: the runs that failed a check, and the exit status."""


def finish(notes):
    """Prints NOTES (one per failed run) and returns the exit status: 1 if any run failed."""
    if notes:
        print('\nNotes (failed checks; those runs are left out of the medians):')
        for n in notes:
            print(f'- {n}')
    return 1 if notes else 0
