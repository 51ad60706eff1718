"""What each panel asks of the model (:mod:`.panel_data`): the functions the compute worker runs for a view."""
