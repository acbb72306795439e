"""One module per page of the window: Target, Configurations, Test matrix, Run, Library, Compare."""
